"""An agent on OpenAI with one tool. Needs OPENAI_API_KEY.

python examples/openai_agent.py
"""

from eudaimon import Agent, tool


@tool(effect="read")
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city's name, e.g. "Paris".
    """
    return f"18°C and sunny in {city}"


agent = Agent(model="openai:gpt-4o-mini", tools=[get_weather], system_prompt="Answer in one sentence.")

if __name__ == "__main__":
    response = agent.prompt_sync("What's the weather in Paris?")
    print(response.text())
