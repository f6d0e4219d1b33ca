"""Template: create_agent + HindsightMiddleware + a tool.

Run: ``python examples/customer_support.py`` (offline) or with
``HINDSIGHT_CHAT_MODEL=openai:gpt-4o-mini``. The code lives in
``hindsight_lg/templates/customer_support.py`` so ``hindsight-lg demo`` finds it in an
installed package; copy it from there to start your own bot.
"""

from hindsight_lg.templates.customer_support import main

if __name__ == "__main__":
    main()
