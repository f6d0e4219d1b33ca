"""Synthetic multi-paragraph chat turns: varied, natural, reproducible.

A user writing to an assistant about their life and work: paragraphs of two
to six sentences on one topic each (family, travel, work, health, food,
hobbies, plans, money), sentences drawn from templates filled with names,
places, times and things, with openers, feelings, questions and asides mixed
in the way people write. :func:`turn` returns a turn of exactly ``n``
sentences, each one event to the heuristic splitter (no "and also" or "by
the way" inside a sentence, which would split it further).
"""

from __future__ import annotations

import random

NAMES = (
    "Maya Lena Tom Aiko Ravi Sofia Jonas Mei Omar Clara Priya Lukas Hana Diego "
    "Nina Felix Amara Kenji Rosa Ivan"
).split()
RELATIVES = (
    "sister brother mom dad wife husband daughter son cousin aunt uncle "
    "grandmother neighbour boss colleague"
).split()
PLACES = (
    "Berlin Lisbon Paris Kyoto Austin Oslo Lima Seoul Cairo Porto Vancouver "
    "Nairobi Hanoi Krakow Dublin Valencia"
).split()
THINGS = (
    "pottery bouldering sourdough jazz piano chess kayaking yoga gardening "
    "salsa trail running birdwatching knitting photography woodworking"
).split()
FOODS = "ramen tacos pho dumplings paella curry falafel risotto bibimbap".split()
PROJECTS = (
    "billing migration|mobile app redesign|quarterly report|data pipeline|"
    "onboarding guide|pricing page|search rewrite|customer survey"
).split("|")
TIMES = (
    "last weekend|on Tuesday|yesterday|two weeks ago|this morning|last month|"
    "over the holidays|on Friday night|earlier today|back in March"
).split("|")
LATER = (
    "next Friday|tomorrow|in two weeks|next month|this weekend|on Monday|"
    "after the holidays|in June|before the end of the quarter"
).split("|")
FEELINGS = (
    "happy|exhausted|a bit anxious|relieved|excited|frustrated|proud|"
    "overwhelmed|grateful|nervous"
).split("|")
OPENERS = (
    "Honestly, ",
    "Anyway, ",
    "So ",
    "Funny thing, ",
    "To be fair, ",
    "Oh, ",
    "Then ",
)

TOPICS: dict[str, tuple[str, ...]] = {
    "family": (
        "My {rel} {name} called me {time} to talk about the move to {place}",
        "{name} has been staying with us since {time}",
        "My {rel} keeps asking when we will visit {place} again",
        "We celebrated {name}'s birthday {time} with a small dinner at home",
        "The kids spent the whole afternoon building a fort in the garden",
        "My {rel} finally started {thing} and sends me videos every day",
        "{name} is starting at a new school in {place} {later}",
        "I promised my {rel} I would help with the garage {later}",
    ),
    "travel": (
        "We flew to {place} {time} and the weather was perfect",
        "The old town in {place} was much busier than I expected",
        "I am planning a trip to {place} with {name} {later}",
        "Our train to {place} was delayed for almost three hours",
        "The hotel near the river had the best breakfast I have ever had",
        "I want to go back to {place} when it is less crowded",
        "{name} recommended a small guesthouse outside {place}",
        "We rented bikes and rode along the coast for the whole day",
    ),
    "work": (
        "The {project} at work is taking far longer than planned",
        "My manager {name} asked me to lead the {project} {later}",
        "We shipped the first part of the {project} {time}",
        "I spent most of the day in meetings about the {project}",
        "{name} from the design team joined our standup {time}",
        "I have to present the {project} to the leadership team {later}",
        "The deadline for the {project} moved again",
        "I am thinking about asking for a transfer to the office in {place}",
    ),
    "health": (
        "I started running again {time} and my knees are not happy about it",
        "The doctor said my blood pressure looks fine now",
        "I have been sleeping badly since {time}",
        "I am trying to drink less coffee and more water",
        "My physiotherapy appointment is {later}",
        "I went to the dentist {time} and it was not as bad as I feared",
        "Yoga in the morning really helps with my back",
    ),
    "food": (
        "We tried a new {food} place near the station {time}",
        "I really like cooking {food} on Sunday evenings",
        "{name} taught me how to make proper {food}",
        "I don't like spicy food as much as I used to",
        "The bakery on our street started selling sourdough on weekends",
        "I am trying to cook at home at least four nights a week",
        "My favourite dish at the moment is homemade {food}",
    ),
    "hobbies": (
        "I signed up for a {thing} class that starts {later}",
        "I have been getting into {thing} since {time}",
        "{name} and I went {thing} {time} and it was harder than it looks",
        "I finally finished the book {name} lent me",
        "My {thing} group meets every Thursday evening",
        "I bought a second-hand camera to take better photos on hikes",
        "I love {thing} because it gets me away from screens",
    ),
    "plans": (
        "Remind me to call {name} about the tickets {later}",
        "I need to renew my passport before the trip to {place}",
        "We are thinking about moving to {place} next year",
        "I will book the flights to {place} {later}",
        "I am going to repaint the living room {later}",
        "Please remember that {name}'s wedding is {later}",
        "I should sort out the insurance before the end of the month",
    ),
    "money": (
        "We set a budget for the renovation and already went over it",
        "The rent in {place} went up again {time}",
        "I am saving for a new laptop because mine is falling apart",
        "{name} owes me for the concert tickets from {time}",
        "I cancelled two subscriptions I never used",
    ),
}
QUESTIONS = (
    "Do you think that is a good idea?",
    "What would you do in my place?",
    "Can you suggest something to read about {thing}?",
    "How long does it usually take to get a visa for {place}?",
    "Is it worth visiting {place} in winter?",
    "Any tips for getting better at {thing}?",
)
ASIDES = (
    "I felt {feeling} about the whole thing.",
    "It was a long day, to be honest.",
    "I am still {feeling} about it.",
    "Not sure why I am telling you all this!",
    "That made my week.",
)


# First words that read lowercase after an opener ("Honestly, the ..."); names
# and "I" keep their capital.
_COMMON_STARTS = frozenset("The We Our My Yoga Please Remind".split())


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        name=rng.choice(NAMES),
        rel=rng.choice(RELATIVES),
        place=rng.choice(PLACES),
        thing=rng.choice(THINGS),
        food=rng.choice(FOODS),
        project=rng.choice(PROJECTS),
        time=rng.choice(TIMES),
        later=rng.choice(LATER),
        feeling=rng.choice(FEELINGS),
    )


def _sentence(topic: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return _fill(rng.choice(QUESTIONS), rng)
    if roll < 0.16:
        return _fill(rng.choice(ASIDES), rng)
    opener = rng.choice(OPENERS) if rng.random() < 0.25 else ""
    body = _fill(rng.choice(TOPICS[topic]), rng)
    if opener:
        if body.split(" ", 1)[0] in _COMMON_STARTS:
            body = body[0].lower() + body[1:]
    end = "!" if rng.random() < 0.1 else "."
    return f"{opener}{body}{end}"


def turn(n: int, rng: random.Random) -> str:
    """A user turn of exactly ``n`` sentences in paragraphs of 2 to 6."""
    paragraphs: list[str] = []
    left = n
    while left > 0:
        size = min(left, rng.randint(2, 6)) if n > 1 else 1
        topic = rng.choice(sorted(TOPICS))
        paragraphs.append(" ".join(_sentence(topic, rng) for _ in range(size)))
        left -= size
    return "\n\n".join(paragraphs)


def turns(count: int, sentences: int, seed: int) -> list[str]:
    """``count`` turns of ``sentences`` sentences each, reproducible by ``seed``."""
    rng = random.Random(seed)
    return [turn(sentences, rng) for _ in range(count)]
