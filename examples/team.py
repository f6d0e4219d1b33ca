"""Template: two agents sharing team-scope memory beside private memory.

Run: ``python examples/team.py`` (offline) or with
``HINDSIGHT_CHAT_MODEL=openai:gpt-4o-mini``. The code lives in
``hindsight_lg/templates/team.py`` so ``hindsight-lg demo`` finds it in an
installed package; copy it from there to start your own bot.
"""

from hindsight_lg.templates.team import main

if __name__ == "__main__":
    main()
