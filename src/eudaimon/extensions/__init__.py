"""Extensions the loop calls at fixed points: hooks, middleware, guardrails, cost, prompts, retry, human input.

Each module is also importable at its DESIGN §6 path (`eudaimon.hooks`, `eudaimon.cost`, …).
"""
