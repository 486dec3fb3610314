"""A user's short answer to the assistant's question, said as a statement.

In a conversation the assistant asks and the user answers with only the value ("What's your
favorite color?" / "Green."), a pronoun ("What does your wife do?" / "She's an architect.")
or a bare yes or no ("Do you still drink coffee?" / "Nope, quit in January."). Read alone,
such a turn says nothing; read with the question, it says what "My favorite color is Green."
says. ``answered`` gives that statement (or None), which the write pipeline then reads like
any turn. Pure: text in, text out.
"""

from __future__ import annotations

import re

from strata_recall.domain.english import is_chatter, sentences

__all__ = ["answered"]

_I = re.IGNORECASE

#: Longest answer (in words) read as the value the question asks for.
VALUE_WORDS = 8

#: "What's your favorite color?", "Who is your manager?", "When is your flight?"
_YOUR_THING = re.compile(r"^(?:and\s+)?(?P<wh>what|who|when|where|which)(?:'s|\s+is|\s+are)\s+"
                         r"your\s+(?P<x>[\w' -]{1,40}?)(?:\s+(?:now|these days|again))?\??$", _I)
#: "How old is your son?"
_HOW_OLD = re.compile(r"^how old is your (?P<x>[\w' -]{1,30}?)\??$", _I)
#: "What's your dog's name?", "What is your sister called?"
_NAME_OF = re.compile(r"^what(?:'s|\s+is)\s+your\s+(?P<x>[\w -]{1,30}?)(?:'s name|\s+called)"
                      r"(?:,?\s+(?:so|to|for)\b[^?]*)?\??$", _I)  # "… so I can address it?"
#: "Where do you work?", "Which city are you flying to?", "What do you drive?"
_YOU_DO = re.compile(r"^(?P<wh>what(?: \w+)?|where|which(?: \w+)?|who)\s+(?P<aux>do|are)\s+you\s+"
                     r"(?:currently\s+|still\s+|usually\s+)?(?P<vp>[a-z][\w -]{0,40}?)"
                     r"(?:,?\s+(?:now|these days|nowadays|currently|at the moment|today))?\??$",
                     _I)
#: A reply's lead that says the value holds on or is new: "Still at Deloitte.", "Now Lyon."
_STILL = re.compile(r"^(?:still|now|currently|these days)\s+", _I)
#: "What does your wife do?": the answer names the holder with a pronoun ("She's …").
_YOUR_X_DOES = re.compile(r"^(?:what|where|how)\s+(?:does|is)\s+your\s+(?P<x>[\w' -]{1,30}?)\s+"
                          r"[a-z]+(?:\s+\w+)?\??$", _I)
#: "Do you still drink coffee?", "Are you still in Lisbon?"
_YES_NO = re.compile(r"^(?P<aux>do|are)\s+you\s+(?:still\s+)?(?P<vp>[a-z][\w' -]{1,40}?)\??$",
                     _I)
#: Yes/no questions whose answer is no fact about the user: offers, checks, the moment.
_NOT_A_CLAIM = re.compile(r"\b(?:me|you|your|yours|us)\b|^(?:want|need|mind|think|know|remember|"
                          r"see|mean|agree|understand|have time|sure|ok|okay|there|ready|free|"
                          r"around|done|busy|kidding|serious|still there|good|alright|awake)\b",
                          _I)
_NO = re.compile(r"^(?:no|nope|nah|not anymore|not any more|no longer|not really|not lately|"
                 r"not these days|not much)\b[\s,.!-]*", _I)
_YES = re.compile(r"^(?:yes|yeah|yep|yup|sure|of course|still do|i do|i am)\b[\s,.!-]*", _I)
#: An answer that speaks of the holder the question named: "She's an architect."
_PRONOUN_LEAD = re.compile(r"^(?P<p>he|she|they)(?P<be>'s|\s+is|'re|\s+are|\s+was)?\b", _I)
#: An answer that is already a statement of the user's own.
_OWN_CLAUSE = re.compile(r"^(?:i|i'm|i've|i'd|i'll|we|we're|my|our)\b", _I)
_PREPOSITION = re.compile(r"^(?:in|at|on|for|to|from|with|near|by|around)\s", _I)


def answered(asked: str, answer: str) -> str | None:
    """The statement ``answer`` makes as a reply to the assistant turn ``asked`` (its last
    sentence a question), or None when it makes none of its own (a full statement, chit-chat,
    a question back, or a question this does not read)."""
    question = _last_question(asked)
    reply = answer.strip()
    if question is None or not reply or reply.endswith("?"):
        return None
    yes_no = _YES_NO.match(question)
    if yes_no is not None:
        return _yes_no(yes_no, reply)
    if _OWN_CLAUSE.match(reply) or is_chatter(reply):
        return None
    pronoun = _PRONOUN_LEAD.match(reply)
    whose = _YOUR_X_DOES.match(question) or _YOUR_THING.match(question) \
        or _HOW_OLD.match(question)
    if pronoun is not None:  # "She's an architect." after "What does your wife do?"
        if whose is None:
            return None
        be = " is" if pronoun["be"] in ("'s", "'re") else pronoun["be"] or ""
        return f"My {whose['x']}{be}{reply[pronoun.end():]}"
    value = _STILL.sub("", reply.rstrip(".! "))
    if _PREPOSITION.match(value):  # "At Stripe."
        value = value[:1].lower() + value[1:]
    if len(value.split()) > VALUE_WORDS:
        return None
    return _with_value(question, value)


def _last_question(turn: str) -> str | None:
    said = sentences(turn.strip())
    last = said[-1].strip() if said else ""
    return last if last.endswith("?") else None


def _with_value(question: str, value: str) -> str | None:
    named = _NAME_OF.match(question)
    if named is not None:
        return f"My {named['x']}'s name is {value}."
    old = _HOW_OLD.match(question)
    if old is not None:
        return f"My {old['x']} is {value}."
    if re.fullmatch(r"how old are you\??", question, _I):
        return f"I am {value}."
    thing = _YOUR_THING.match(question)
    if thing is not None:
        at = "in " if thing["wh"].casefold() == "where" and not _PREPOSITION.match(value) else ""
        return f"My {thing['x']} is {at}{value}."
    you_do = _YOU_DO.match(question)
    if you_do is not None:
        return _i_do(you_do, value)
    return None


def _i_do(question: re.Match[str], value: str) -> str | None:
    """"Where do you work?" / "At Stripe." → "I work at Stripe."; "Which city are you flying
    to?" / "Denver." → "I am flying to Denver."; "Which gym do you go to?" / "Equinox." →
    "My gym is Equinox." (the noun names what is asked)."""
    vp = question["vp"].strip()
    which = re.fullmatch(r"(?:which|what) (?P<noun>\w+)", question["wh"], _I)
    if which is not None and (question["aux"].casefold() == "do"
                              or vp.casefold() in ("in", "on", "with", "at", "under")):
        return f"My {which['noun']} is {value}."  # "What timezone are you in?" / "pacific"
    if which is not None and which[0].split()[0].casefold() == "what":
        return None  # "what time are you free": not a thing of theirs
    if question["aux"].casefold() == "are":
        vp = f"am {vp}"
    if question["wh"].casefold() == "where" and not _PREPOSITION.match(value) \
            and not vp.endswith((" to", " in", " at", " from")):
        value = f"{'at' if vp.split()[0] == 'work' else 'in'} {value}"
    return f"I {vp} {value}."


def _yes_no(question: re.Match[str], reply: str) -> str | None:
    """"Do you still drink coffee?" / "Nope, quit in January." → "I don't drink coffee
    anymore. quit in January."; a yes says the question's claim holds."""
    vp = question["vp"].strip()
    if _NOT_A_CLAIM.search(vp):  # "Do you want me to remind you?", "Are you sure?"
        return None
    no, yes = _NO.match(reply), _YES.match(reply)
    lead = no or yes
    said = reply[lead.end():].strip() if lead is not None else ""
    if _OWN_CLAUSE.match(said):  # "No, I moved to Porto last month.": it says it itself
        return None
    if no is not None:
        claim = f"I am not {vp} anymore." if question["aux"].casefold() == "are" \
            else f"I don't {vp} anymore."
    elif yes is not None:
        claim = f"I am {vp}." if question["aux"].casefold() == "are" else f"I {vp}."
    else:
        return None
    return f"{claim} {said}".strip() if said else claim
