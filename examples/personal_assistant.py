"""Template: StateGraph + recall / capture / reflect nodes + HindsightSaver.

Run: ``python examples/personal_assistant.py`` (offline) or with
``HINDSIGHT_CHAT_MODEL=openai:gpt-4o-mini``. The code lives in
``hindsight_lg/templates/personal_assistant.py`` so ``hindsight-lg demo`` finds it in an
installed package; copy it from there to start your own bot.
"""

from hindsight_lg.templates.personal_assistant import main

if __name__ == "__main__":
    main()
