# ruff: noqa: E501  (gold-set data templates read best one per line)
"""Writes src/strata_recall/bench/data/correctness.jsonl: the gold set of ``strata bench correctness``.

Each case is a short history (single remembers or ``messages=[...]`` with user and assistant
turns) and what must hold after it: substrings that must be live, whole memories or
substrings that must not be live, and a question whose top recall hit must contain ``top``.
Phrasings are varied on purpose; the engine never sees this file except through the facade.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "src/strata_recall/bench/data/correctness.jsonl"
rng = random.Random(12)
CITIES = ["Lisbon", "Porto", "Oslo", "Denver", "Kyoto", "Lyon", "Austin", "Tallinn", "Cork",
          "Bergen", "Quito", "Hanoi", "Leeds", "Graz", "Perth", "Malmo", "Turin", "Cusco"]
FIRMS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne",
         "Cyberdyne", "Tyrell", "Soylent", "Wonka", "Gringotts", "Monarch", "Pied Piper"]
PEOPLE = ["Carla", "Tom", "Priya", "Jonas", "Mei", "Omar", "Lucia", "Sven", "Aiko", "Rafael",
          "Nadia", "Kofi", "Greta", "Hugo", "Ines", "Yusuf"]
FOODS = ["cilantro", "mushrooms", "olives", "oysters", "tofu", "anchovies", "licorice",
         "blue cheese", "okra", "eggplant", "beets", "sardines"]
HABITS = [("eat meat", "meat"), ("smoke", "smoke"), ("drink alcohol", "alcohol"),
          ("play tennis", "tennis"), ("drink coffee", "coffee"), ("play golf", "golf"),
          ("eat sugar", "sugar"), ("watch TV", "TV"), ("run marathons", "marathons"),
          ("ride a motorbike", "motorbike")]
CHAT_USER = ["thanks!", "lol", "ok", "haha nice", "brb", "hi there!", "good morning :)",
             "cool cool", "👍", "sounds good", "hmm let me think", "yeah totally", "bye!",
             "thank you so much!!", "okay", "see you later", "nice one", "wow", "hey!",
             "alright then", "lmao", "sure", "ttyl", "great, thanks"]
CHAT_BOT = ["Got it, I'll remember that.", "Noted!", "Sure thing.", "You're welcome!",
            "Got it.", "Understood, I'll keep that in mind.", "Happy to help!", "Okay!",
            "Thanks for letting me know.", "Will do.", "Great!", "No problem at all."]


def case(category: str, steps: list[dict[str, Any]], question: str, top: str, *,
         live: list[str] = (), not_live: list[str] = (), not_live_exact: list[str] = (),
         disputed: list[str] = (), max_live: dict[str, int] | None = None,
         not_top_exact: list[str] = ()) -> dict[str, Any]:
    return {"category": category, "steps": steps, "question": question, "top": top,
            "live": list(live), "not_live": list(not_live),
            "not_live_exact": list(not_live_exact), "disputed": list(disputed),
            "max_live": max_live or {}, "not_top_exact": list(not_top_exact)}


def t(text: str, **extra: Any) -> dict[str, Any]:
    return {"text": text, **extra}


def chat(*turns: str) -> dict[str, Any]:
    roles = itertools.cycle(["user", "assistant"])
    return {"messages": [{"role": next(roles), "content": x} for x in turns]}


def pairs(items: list[str], n: int) -> list[tuple[str, str]]:
    out = []
    while len(out) < n:
        a, b = rng.sample(items, 2)
        if (a, b) not in out:
            out.append((a, b))
    return out


def updates() -> list[dict[str, Any]]:
    out = []
    moves = ["I moved to {b} last month.", "I just moved to {b}.", "I live in {b} now.",
             "These days I live in {b}.", "We relocated to {b} in the spring, so I live there now.",
             "I moved from {a} to {b} in September."]
    for i, (a, b) in enumerate(pairs(CITIES, 14)):
        out.append(case("updates", [t(f"I live in {a}."), t(moves[i % len(moves)].format(a=a, b=b))],
                        "Where do I live?", b, live=[b], not_live_exact=[f"I live in {a}."]))
    jobs = ["I now work at {b}.", "I switched jobs, I work at {b} now.",
            "I left {a} and joined {b}.", "Starting this week I work at {b}."]
    for i, (a, b) in enumerate(pairs(FIRMS, 12)):
        out.append(case("updates", [t(f"I work at {a}."), t(jobs[i % len(jobs)].format(a=a, b=b))],
                        "Where do I work?", b, live=[b], not_live_exact=[f"I work at {a}."]))
    mgr = ["My new manager is {b}.", "{a} handed my team over to {b}, so my manager is {b} now.",
           "My manager is now {b}."]
    for i, (a, b) in enumerate(pairs(PEOPLE, 9)):
        out.append(case("updates", [t(f"My manager is {a}."), t(mgr[i % len(mgr)].format(a=a, b=b))],
                        "Who is my manager?", b, live=[b], not_live_exact=[f"My manager is {a}."]))
    return out


def corrections() -> list[dict[str, Any]]:
    out = []
    forms = ["Actually, my manager is {b}, not {a}.", "Correction: my manager is {b}.",
             "I was wrong earlier, my manager is {b}.", "Sorry, I misspoke: my manager is {b}."]
    for i, (a, b) in enumerate(pairs(PEOPLE, 12)):
        out.append(case("corrections", [t(f"My manager is {a}."), t(forms[i % 4].format(a=a, b=b))],
                        "Who is my manager?", b, live=[b], not_live_exact=[f"My manager is {a}."]))
    phone = ["Actually my phone number is {b}.", "Correction: my phone number is {b}.",
             "Oops, my phone number is {b}, not {a}."]
    for i in range(12):
        a, b = f"555-{rng.randint(1000, 9999)}", f"555-{rng.randint(1000, 9999)}"
        out.append(case("corrections", [t(f"My phone number is {a}."), t(phone[i % 3].format(a=a, b=b))],
                        "What is my phone number?", b, live=[b],
                        not_live_exact=[f"My phone number is {a}."]))
    ed = ["Actually I use {b}, not {a}.", "Correction: my editor is {b}.", "I was wrong, I use {b}."]
    editors = ["Vim", "Emacs", "VS Code", "Sublime Text", "Helix", "Zed"]
    for i, (a, b) in enumerate(pairs(editors, 10)):
        out.append(case("corrections", [t(f"I use {a} as my editor."), t(ed[i % 3].format(a=a, b=b))],
                        "Which editor do I use?", b, live=[b],
                        not_live_exact=[f"I use {a} as my editor."]))
    return out


def negations() -> list[dict[str, Any]]:
    out = []
    forms = ["I don't {h} anymore.", "I no longer {h}.", "I stopped: I don't {h} these days.",
             "I gave it up, I don't {h} now."]
    for i, ((h, key), f) in enumerate(itertools.product(HABITS, forms)):
        if i % 1 == 0 and len(out) < 34:
            out.append(case("negations", [t(f"I {h}."), t(f.format(h=h))],
                            f"Do I {h}?", "", live=[key], not_live_exact=[f"I {h}."],
                            not_top_exact=[f"I {h}."]))
    return out


def paraphrases() -> list[dict[str, Any]]:
    out = []
    drinks = [("tea", "coffee"), ("coffee", "tea"), ("espresso", "tea"), ("green tea", "coffee")]
    forms = [("I prefer {x} over {y}.", "I prefer {x} to {y}."),
             ("I prefer {x} over {y}.", "I'd rather have {x} than {y}, I prefer {x}."),
             ("I prefer {x}.", "I prefer {x}!")]
    for (x, y), (f1, f2) in itertools.product(drinks, forms):
        out.append(case("paraphrases", [t(f1.format(x=x, y=y)), t(f2.format(x=x, y=y))],
                        "What do I like to drink?", x, live=[x], max_live={x: 1}))
    for c in CITIES[:12]:
        out.append(case("paraphrases", [t(f"I live in {c}."), t(f"I live in {c}")],
                        "Where do I live?", c, live=[c], max_live={c: 1}))
    for f in FIRMS[:10]:
        out.append(case("paraphrases", [t(f"I work at {f}."), t(f"I work at {f}, by the way.")],
                        "Where do I work?", f, live=[f], max_live={f: 1}))
    return out


def lookalikes() -> list[dict[str, Any]]:
    out = []
    for a, b in pairs(CITIES, 12):
        out.append(case("lookalikes", [t(f"My sister lives in {a}."), t(f"My brother lives in {b}.")],
                        "Where does my brother live?", b, live=[a, b]))
    for a, b in pairs(FOODS, 12):
        out.append(case("lookalikes", [t(f"I love {a}."), t(f"I love {b}.")],
                        f"Do I like {b}?", b, live=[a, b]))
    for (a, b), (p, q) in zip(pairs(FIRMS, 10), pairs(PEOPLE, 10), strict=True):
        out.append(case("lookalikes", [t(f"{p} works at {a}."), t(f"{q} works at {b}.")],
                        f"Where does {q} work?", b, live=[a, b]))
    return out


def chitchat() -> list[dict[str, Any]]:
    out = []
    facts = [(f"I'm allergic to {f}.", "What am I allergic to?", f) for f in FOODS] + \
            [(f"My dog is called {p}.", "What is my dog called?", p) for p in PEOPLE[:12]] + \
            [(f"I was born in {c}.", "Where was I born?", c) for c in CITIES[:10]]
    for i, (fact, q, top) in enumerate(facts):
        u1, u2 = rng.sample(CHAT_USER, 2)
        b1, b2 = rng.sample(CHAT_BOT, 2)
        step = chat(u1, b1, fact, b2, u2, rng.choice(CHAT_BOT)) if i % 2 else \
            chat(fact, b1, u1, b2)
        out.append(case("chitchat", [step], q, top, live=[top],
                        not_live_exact=[u1, u2, b1, b2]))
    return out


def third_person() -> list[dict[str, Any]]:
    out = []
    jobs = ["nurse", "pilot", "chef", "lawyer", "teacher", "plumber", "architect", "dentist"]
    for p, j in zip(PEOPLE, itertools.cycle(jobs)):
        out.append(case("third_person", [t(f"My friend {p} is a {j}.")], f"What does {p} do?", j,
                        live=[j]))
    for p, c in zip(PEOPLE, CITIES, strict=False):
        out.append(case("third_person", [t(f"{p} lives in {c}.")], f"Where does {p} live?", c,
                        live=[c]))
    return out


def several() -> list[dict[str, Any]]:
    out = []
    for c, f in zip(CITIES, FIRMS, strict=False):
        out.append(case("several_facts", [t(f"I live in {c} and I work at {f}.")],
                        "Where do I work?", f, live=[c, f]))
    for p, food in zip(PEOPLE, FOODS, strict=False):
        out.append(case("several_facts", [t(f"My manager is {p}, and I'm allergic to {food}.")],
                        "What am I allergic to?", food, live=[p, food]))
    for p, c in zip(PEOPLE[:8], reversed(CITIES), strict=False):
        out.append(case("several_facts", [t(f"My sister {p} just had a baby and lives in {c}.")],
                        f"Where does {p} live?", c, live=[p, c]))
    return out


def pinned() -> list[dict[str, Any]]:
    out = []
    types = ["O negative", "A positive", "B negative", "AB positive"]
    for _i, (a, b) in enumerate(pairs(types, 8)):
        out.append(case("pinned", [t(f"My blood type is {a}.", pinned=True),
                                   t(f"My blood type is {b}.")],
                        "What is my blood type?", "blood type", live=[f"My blood type is {a}."]))
    for a, b in pairs(CITIES, 12):
        out.append(case("pinned", [t(f"I live in {a}.", pinned=True), t(f"I moved to {b}.")],
                        "Where do I live?", "", live=[f"I live in {a}."]))
    for a, b in pairs(PEOPLE, 12):
        out.append(case("pinned", [t(f"My manager is {a}.", pinned=True),
                                   t(f"Actually, my manager is {b}.")],
                        "Who is my manager?", "", live=[f"My manager is {a}."]))
    return out


def main() -> None:
    cases = [*updates(), *corrections(), *negations(), *paraphrases(), *lookalikes(),
             *chitchat(), *third_person(), *several(), *pinned()]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w") as fh:
        for i, c in enumerate(cases):
            fh.write(json.dumps({"id": f"c{i:03d}", **c}) + "\n")
    print(len(cases), "cases")


if __name__ == "__main__":
    main()
