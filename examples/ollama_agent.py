"""An agent on a local Ollama model with one tool. No key needed.

    ollama pull llama3.2 && python examples/ollama_agent.py

The server is http://localhost:11434/v1 unless OLLAMA_BASE_URL says otherwise.
"""

from eudaimon import Agent, tool


@tool(effect="read")
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: The city's name, e.g. "Paris".
    """
    return f"18°C and sunny in {city}"


agent = Agent(model="ollama:llama3.2", tools=[get_weather], system_prompt="Answer in one sentence.")

if __name__ == "__main__":
    response = agent.prompt_sync("What's the weather in Paris?")
    print(response.text())
