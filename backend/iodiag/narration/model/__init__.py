"""The model wing: the chat model a narration may use, and how it is run.

``llm`` is the interface the rest of narration sees (``ChatModel``: the bundled llama.cpp model in a child
process, or an OpenAI-compatible endpoint); ``process`` and ``worker`` keep the bundled model in its own
process so a crash or a hang costs one answer; ``openai_chat`` speaks to an endpoint; ``errors`` names
what can go wrong. Nothing here knows about reports or facts.
"""
