"""Helper of the reproducibility test: one fresh engine, one chat, its recalls as JSON.

``python _reproducible_run.py up|down`` captures :data:`CHAT` (three sessions,
each turn at its session's time, as chat logs date them) into a fresh
in-memory engine with the default embedder and a frozen clock, asks
:data:`QUESTIONS` and prints, per question, each recalled memory's content,
score and line (its id left out). Memory ids count ``up`` or ``down`` in
capture order instead of being random, so that every tie broken by id falls
the other way in the other run.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import uuid

SESSIONS = {
    "s1": 1_680_000_000.0,
    "s2": 1_681_000_000.0,
    "s3": 1_682_000_000.0,
}
CHAT = [
    ("s1", "Audrey", "Hey Andrew! Good to see you! What's new?"),
    ("s1", "Andrew", "Hey Audrey! I started a new job as a financial analyst."),
    ("s1", "Audrey", "Congrats! I adopted another puppy, her name is Pixie."),
    ("s1", "Andrew", "So cute!"),
    ("s1", "Audrey", "So cute!"),
    ("s1", "Andrew", "What breed is Pixie?"),
    ("s1", "Audrey", "She's a mix, we think part beagle."),
    ("s1", "Andrew", "I miss having a dog, we had one when I was a kid."),
    ("s1", "Audrey", "My dogs love the park by the river."),
    ("s1", "Andrew", "See you soon!"),
    ("s1", "Audrey", "See you soon!"),
    ("s1", "Andrew", "I love birds, eagles most of all."),
    ("s1", "Audrey", "Birds are great."),
    ("s2", "Andrew", "My girlfriend and I tried a new cafe with great croissants."),
    ("s2", "Audrey", "Yum, croissants!"),
    ("s2", "Andrew", "Yum, croissants!"),
    ("s2", "Audrey", "I got a tattoo of my four dogs last week."),
    ("s2", "Andrew", "Wow, that tattoo looks great!"),
    ("s2", "Audrey", "Thanks! It means a lot to me."),
    ("s2", "Andrew", "We are looking for a dog-friendly apartment."),
    ("s2", "Audrey", "Good luck with the apartment hunt."),
    ("s2", "Andrew", "Thanks!"),
    ("s2", "Audrey", "Thanks!"),
    ("s2", "Andrew", "I went hiking at Fox Hollow on Saturday."),
    ("s2", "Audrey", "Fox Hollow is lovely in spring."),
    ("s2", "Andrew", "Fox Hollow has steep rocky trails."),
    ("s2", "Andrew", "Fox Hollow has quiet shady lakes."),
    ("s2", "Andrew", "The views were amazing."),
    ("s3", "Audrey", "Pixie learned to sit and give paw."),
    ("s3", "Audrey", "Pixie sleeps on the blue sofa."),
    ("s3", "Audrey", "Pixie barks at the mail carrier."),
    ("s3", "Andrew", "Nice!"),
    ("s3", "Audrey", "Nice!"),
    ("s3", "Andrew", "I saw a hummingbird in the garden today."),
    ("s3", "Audrey", "Hummingbirds are so fast."),
    ("s3", "Andrew", "We found an apartment near the park."),
    ("s3", "Audrey", "That's great news, now you can get a dog!"),
    ("s3", "Andrew", "I'm thinking about adopting a puppy from the shelter."),
    ("s3", "Audrey", "The shelter on Elm Street is where I found Pixie."),
    ("s3", "Andrew", "My girlfriend wants a golden retriever."),
    ("s3", "Audrey", "Golden retrievers are so friendly."),
    ("s3", "Andrew", "Talk soon!"),
    ("s3", "Audrey", "Talk soon!"),
    ("s3", "Andrew", "I'll send you pictures of the new place."),
]
QUESTIONS = [
    "What is the name of Audrey's new puppy?",
    "What job did Andrew start?",
    "What does Pixie do all day?",
    "Which birds does Andrew love?",
    "What is Fox Hollow like?",
    "What did Andrew eat at the cafe?",
    "Where did Audrey find Pixie?",
    "What dog does Andrew's girlfriend want?",
    "croissants?",
    "Did Andrew find an apartment?",
]
_ID = re.compile(r" · id [0-9a-f]+")


def main(order: str) -> None:
    """Capture the chat with ids counting in ``order``, print the recalls."""
    counter = itertools.count(1)
    step = 1 if order == "up" else -1
    # Ids by capture order, forwards or backwards: the runs differ in ids only.
    uuid.uuid4 = lambda: uuid.UUID(int=(1 << 64) + step * next(counter))

    from hindsight_lg import HindsightMemory
    from hindsight_lg.embeddings import default_embedder
    from hindsight_lg.testing import FrozenClock, InMemoryBackend

    clock = FrozenClock(max(SESSIONS.values()) + 3600)
    memory = HindsightMemory(InMemoryBackend(), default_embedder(), clock=clock)
    for session, speaker, text in CHAT:
        at = SESSIONS[session]
        memory.capture(
            text, namespace="u", speaker=speaker, thread_id=session, event_time=at
        )
    recalled = {}
    for question in QUESTIONS:
        found = memory.recall(question, namespace="u", timeout=None)
        recalled[question] = [
            [m.record.content, m.record.participants, m.score, _ID.sub("", m.line)]
            for m in found.memories
        ]
    json.dump(recalled, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
