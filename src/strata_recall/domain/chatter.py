"""Is a whole turn chit-chat? Greetings, thanks, acknowledgements, laughter, fillers and
small-talk questions carry no fact of their own ([002]: importance 1-2, "not stored").

Such a turn stays in the raw event log and in its episode's text, but never becomes a
recallable memory of its own. The test is made of general features, not of phrases:

* what is left of the turn once its dialogue-act vocabulary (the words people use to greet,
  thank, agree, laugh, take leave or hold the floor), its stop words and its symbols (emoji,
  punctuation) are taken away: a turn with no content word left is chit-chat;
* an assistant turn that only acknowledges ("noted", "I'll remember that") with at most one
  word of its own, the memory verbs aside, is chit-chat too: it restates nothing;
* a number, a capitalised name in the middle of the turn or a longer sentence is content.
"""

from __future__ import annotations

import re

from strata_recall.domain.text import STOPWORDS, as_digit, stem, words

#: The vocabulary of dialogue acts: greeting, thanking, agreeing, evaluating, laughing,
#: taking leave, holding the floor. A turn made only of these (and stop words) says nothing.
DIALOGUE_ACT_WORDS = frozenset(
    """hi hello hey hiya yo howdy greetings morning evening afternoon night thanks thank thx ty
    tysm cheers appreciate appreciated welcome ok okay okey k kk sure yes yeah yep yup ya yea
    aye no nope nah right alright fine cool great nice awesome amazing wonderful perfect
    lovely excellent neat sweet super brilliant fantastic good bad wow whoa oh ah aha ahh ooh
    oops hmm hm mm mmm um uh erm er huh eh meh well so anyway anyways lol lmao rofl haha hahaha
    hehe heh xd bye goodbye later brb ttyl gtg cya see soon care np noprob worries problem
    sounds seems makes sense agreed agree indeed totally absolutely definitely exactly true
    got gotcha understood noted roger copy deal done wait moment sec second minute let think
    guess know mean really seriously honestly literally hope hopefully glad happy sorry please
    interesting fair enough ready go going hear hearing says said tell talk chat catch
    congrats congratulations bless luck much lot lots thing things day weekend one job point
    shot aw aww doing asking ask anytime pleasure cute adorable beautiful gorgeous delicious
    yummy tasty exciting impressive fun funny lucky clever shame pity anything else help
    helpful back idk dunno idc nvm tbh imo ikr smh omg tiny pretty ugh yay woohoo phew
    hooray long short busy crazy wild rough earlier tired sleepy bored hilarious awful
    terrible weird strange annoying frustrating incredible insane epic ridiculous brutal
    unbelievable details detail more questions question feel free claro vale gracias merci
    yet chill special figured never mind nevermind nothing
    danke bitte oui genau rock rocks lifesaver legend best helps helped reply late response
    delay gm gn judge week course laugh smile okie dokie dokey bet huge massive yesterday
    today tonight pls plz plis u ur thanx thnx thnks tnx thanku ahead works worked working
    fixed solved sorted trick quick real q""".split()
)
#: Verbs an assistant uses to say it took something in ("I'll remember that").
MEMORY_VERBS = frozenset("remember remembered note noted keep kept mind save saved store stored "
                         "record recorded write jot logged log track".split())
#: Laughter and elongated interjections: "hahaha", "lolol", "sooo", "hmmmm".
_LAUGHTER = re.compile(r"^(?:(?:ha|he|hi|ho)+h?|h+i+|h+e+y+|y+o+|l+o+l+(?:o+l+)*|x+d+|a+h+|o+h+|"
                       r"h+m+|m+|u+h+|"
                       r"z+)$")
_REPEATS = re.compile(r"(\w)\1{2,}")
#: A capitalised word inside a sentence (a name: "Carla", "Porto") or a digit is content.
_NAME_OR_NUMBER = re.compile(r"(?<=[\w,;:'\"]\s)[A-Z][a-z]+|\d")
#: Taking leave in a few words ("gotta run", "heading out", "off to bed"): its words are
#: content elsewhere ("I run", "my head"), so the phrase goes, not the words.
_LEAVE_TAKING = re.compile(
    r"\b(?:(?:i\s+)?(?:gotta|got\s+to|have\s+to|need\s+to|must)\s+(?:run|go|dash|bounce|"
    r"fly|head\s+out|head\s+off|jump)|heading\s+(?:out|off)|off\s+to\s+bed|signing\s+off|"
    r"logging\s+off|(?:that(?:'s|\s+is|'ll\s+be|\s+will\s+be|'d\s+be|\s+would\s+be))\s+"
    r"(?:all|it|everything)(?:\s+for\s+(?:today|now|tonight))?|(?:grabbing|getting|gonna\s+grab|going\s+to\s+grab)\s+(?:a\s+|some\s+)?"
    r"(?:coffee|lunch|dinner|a\s+bite|food|a\s+snack|snack|a\s+drink|tea)|"
    r"talk\s+(?:to\s+you\s+)?(?:later|soon|tomorrow)|(?:i\s+will\s+|i'll\s+)?"
    r"get\s+back\s+to\s+you(?:\s+(?:later|soon|tomorrow))?|(?:i\s+will\s+|i'll\s+)?"
    r"let\s+you\s+know|back\s+to\s+work|(?:that's|that\s+is)\s+(?:enough|all|it)\s+for\s+"
    r"(?:today|now|tonight|the\s+day))\b", re.IGNORECASE)
#: Agreeing or offering in a stock phrase ("sounds like a plan", "count me in", "lmk if you
#: need anything else"): its words are content elsewhere ("my plan", "I need a car"), so the
#: phrase goes, not the words.
_STOCK_PHRASES = re.compile(
    r"\b(?:(?:sounds|that's|that\s+is|it's)\s+(?:like\s+)?a\s+(?:plan|deal)|count\s+me\s+in|"
    r"^(?:that\s+|it\s+)?works\s+for\s+me|(?:(?:lmk|let\s+me\s+know|holler|shout)\s+)?if\s+"
    r"you\s+need\s+(?:anything|something|me)(?:\s+else)?(?:\s+from\s+me)?|"
    # "nm just bored lol": nothing much going on
    r"^(?:nm|nmu|not\s+much|nothing\s+much)(?:,?\s+(?:just\s+)?(?:bored|chilling|chillin|"
    r"relaxing|vibing|hanging\s+out|sitting\s+here|here))?|"
    # "perfect, ordering it now ty": what the user is about to do with the answer
    r"(?:ordering|buying|booking|grabbing|getting|trying|doing|using|making|reading|"
    r"watching|cooking|sending|printing)\s+(?:it|that|this|them|one)\s+(?:now|rn|today|"
    r"tonight|later|asap|tomorrow)|"
    # "You're welcome! Glad you liked it.": the answer to thanks
    r"you(?:'re|\s+are)\s+(?:very\s+|so\s+|most\s+)?welcome|my\s+pleasure|"
    r"glad\s+(?:you\s+(?:liked|enjoyed|loved)\s+(?:it|that|them)|(?:i|it)\s+(?:could\s+)?"
    r"help(?:ed)?)|"
    # "thanks so much, that recipe was great": thanks, and what the user made of the answer
    r"^(?:thanks|thank\s+you|thx|ty)(?:\s+(?:so|very)\s+much|\s+a\s+lot|\s+again)?[,!.]*\s+"
    r"(?:that|this|it|the|your)(?:\s+\w+)?\s+(?:was|is|were|looks?|sounds?|worked)"
    r"(?:\s+(?:so|really|super|very|perfectly))?(?:\s+(?:great|perfect|helpful|awesome|"
    r"amazing|delicious|good|useful|lovely|fantastic|well))?)\b", re.IGNORECASE)
#: Longest turn (in words) that can be chit-chat at all.
MAX_CHATTER_WORDS = 14
#: Content words an acknowledgement may carry and still restate nothing (one more when it
#: says it takes note: "I'll keep that in mind for future bookings").
ACK_CONTENT_ALLOWANCE = 1

#: What an assistant wishes the user on the way out ("Noted, safe travels!", "Enjoy the
#: trip!"): no content in an acknowledgement, though content in a user's own turn.
WELL_WISHES = frozenset("safe travels travel trip journey flight enjoy fun luck care rest "
                        "meal stay time birthday anniversary early belated holiday holidays "
                        "weekend take made congratulations congrats milestone big huge deal "
                        "achievement".split())

ASSISTANT_ROLES = frozenset({"assistant", "ai", "bot", "model"})
_PRONOUNS_SAID = re.compile(r"\b(?:he|she|they|ze|xe)/\w+", re.IGNORECASE)
#: A request for help that names nothing ("can you help me with something?"; "Can you help
#: me plan my trip to Japan?" names a trip and stays).
_ASKS_FOR_HELP = re.compile(r"^(?:hey,?\s+)?(?:can|could|would|will) you (?:please )?"
                            r"(?:help|assist)(?: me)?(?: (?:with|out with) (?:something|"
                            r"a thing|this|that|a question|something quick))?"
                            r"(?: (?:real )?quick)?(?:,? please)?[?!. ]*$", re.IGNORECASE)
_LAMENT = re.compile(r"u+g+h+|a+r+g+h+|meh|blah|sigh")


def is_chatter(text: str, role: str | None = None) -> bool:
    """True when the turn is chit-chat or an acknowledgement with no fact of its own."""
    tokens = words(_STOCK_PHRASES.sub(" ", _LEAVE_TAKING.sub(" ", text)))
    if not tokens:
        return True  # emoji, punctuation, whitespace, a goodbye
    if (role or "").lower() in ASSISTANT_ROLES and (_only_asks(text) or _reports_done(text)):
        return True  # "Exciting! Machu Picchu?": it asks, it says nothing (the answer does)
    if len(tokens) > MAX_CHATTER_WORDS or _NAME_OR_NUMBER.search(text.strip()) \
            or _PRONOUNS_SAID.search(text):  # "I go by they/them now": all stop words
        return False
    content = content_words(tokens)
    if _ASKS_FOR_HELP.match(text.strip()):
        return True  # "can you help me with something?": a request, not a fact
    if not content or (_LAMENT.fullmatch(tokens[0]) and len(tokens) <= 2):
        return True  # "ugh mondays": a sigh, not a claim ("ugh I hate mondays" is one)
    if (role or "").lower() in ASSISTANT_ROLES:
        said = [w for w in content if w not in WELL_WISHES]
        allowance = ACK_CONTENT_ALLOWANCE + (1 if _takes_note(tokens) else 0)
        if not said:  # "Have a great trip!": only wishes and pleasantries
            return True
        return (_acknowledges(tokens) and len(said) <= allowance) or _small_talk(text)
    return False


#: An assistant reporting what it just did for the user ("Reminder set for August 24.",
#: "Added to your calendar.", "Recorded."): the user's turn holds the fact it acted on.
_DONE = re.compile(
    r"^(?:(?:ok(?:ay)?|sure|great|perfect|alright|all right|got it|done)[,!.]?\s+)?(?:"
    r"(?:your |the |a )?(?:reminders?|alarms?|timers?|events?|alerts?|notifications?|"
    r"calendar(?: entry)?)\s+(?:is |are |has been |have been )?"
    r"(?:set|added|created|scheduled|booked|moved|updated|saved|cancell?ed|removed)|"
    r"(?:added|booked|scheduled|saved|recorded|logged|blocked|cancell?ed|removed|sent|"
    r"subscribed|unsubscribed|updated|moved|set)\b(?: (?:it|that|this|them))?"
    r"(?: (?:to|on|in|for|from) (?:your|the) \w+)?)[.!]*$",
    re.IGNORECASE)
#: Longest report of an action that carries nothing of its own.
DONE_WORDS = 8


def _reports_done(text: str) -> bool:
    """An assistant's short report of an action it took ("Reminder set for August 24.")."""
    head = text.strip().split(" for ", 1)[0] if len(text.split()) <= DONE_WORDS else ""
    return bool(head) and _DONE.match(head.strip().rstrip(".!") + ".") is not None


#: Longest exclamation that opens an assistant's question without saying anything ("Nice
#: routine! Which gym?").
REACTION_WORDS = 4


def _only_asks(text: str) -> bool:
    """An assistant turn made of questions, perhaps after a short reaction: it asks for a
    fact and states none (the user's answer is read with it: ``domain/answers.py``)."""
    pieces = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text.strip()) if p.strip()]
    return bool(pieces) and pieces[-1].endswith("?") and all(
        p.endswith("?") or (p.endswith("!") and len(p.split()) <= REACTION_WORDS)
        for p in pieces)


#: Longest question an assistant asks only to keep the talk going ("What's new with you?").
SMALL_TALK_QUESTION_WORDS = 6


def _small_talk(text: str) -> bool:
    """An assistant turn whose every sentence is chit-chat or a short question back ("Not
    much! What's new with you?"); a name or a number in it is content (checked before)."""
    pieces = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text.strip()) if p.strip()]
    return bool(pieces) and all(
        (p.endswith("?") and len(words(p)) <= SMALL_TALK_QUESTION_WORDS)
        or not content_words(words(p)) for p in pieces)


def content_words(tokens: list[str]) -> list[str]:
    """The tokens that are neither stop words, dialogue acts nor laughter."""
    out = []
    for token in tokens:
        base = _REPEATS.sub(r"\1", token.split("'", 1)[0])
        if not base or base in STOPWORDS or base in DIALOGUE_ACT_WORDS:
            continue
        if _LAUGHTER.match(base) or token in DIALOGUE_ACT_WORDS:
            continue
        out.append(base)
    return [w for w in out if w not in MEMORY_VERBS] if out else out


def _takes_note(tokens: list[str]) -> bool:
    """The assistant says it will remember ("I'll keep that in mind for future bookings"):
    the words around that say what for, not a fact."""
    return any(t in MEMORY_VERBS for t in tokens)


def _acknowledges(tokens: list[str]) -> bool:
    """An assistant turn that opens with an act word or speaks of remembering."""
    return tokens[0] in DIALOGUE_ACT_WORDS or any(t in MEMORY_VERBS for t in tokens)


def is_echo(text: str, previous: str | None, role: str | None = None) -> bool:
    """An assistant's acknowledgement or reaction that only repeats the turn before it ("Got
    it, you work at Deloitte." after "I work at Deloitte.", "Autumn is lovely!" after "My
    favourite season is autumn."): the user's turn holds the fact, and a copy would stay live
    when the user later corrects it."""
    if previous is None or (role or "").lower() not in ASSISTANT_ROLES:
        return False
    tokens = words(text)
    exclaimed = text.strip().endswith("!") and len(tokens) <= EXCLAMATION_WORDS
    reports = bool(tokens) and tokens[0] in _REPORTED
    if not tokens or len(tokens) > MAX_CHATTER_WORDS or not (
            exclaimed or reports or _acknowledges(tokens)
            or any(t in DIALOGUE_ACT_WORDS for t in tokens)):
        return False  # neither an acknowledgement nor a reaction ("Autumn is lovely!")
    said = {as_digit(stem(w)) for w in content_words(tokens)} - {"you", "your", "yours"}
    if reports:  # "Added: your sister's baby shower on May 18.": what it did is no claim
        said.discard(as_digit(stem(tokens[0])))
    heard = {as_digit(stem(w)) for w in content_words(words(previous))}
    opens = tokens[0] in _ACK_OPENERS or tokens[0] in DIALOGUE_ACT_WORDS
    return said <= heard or (opens and _specifics(text) <= heard and _claims_nothing(text))


#: What an assistant reports having done, opening a turn that then repeats what it acted on
#: ("Added: your sister's baby shower on May 18.", "Saved — dentist on the 4th").
_REPORTED = frozenset("added saved noted logged scheduled booked recorded updated set "
                      "blocked done".split())
#: Words an assistant opens an acknowledgement with ("Sure, Nopa on Saturday, party of six.",
#: "Thanks, I'll use June 3.").
_ACK_OPENERS = frozenset("sure ok okay got noted thanks thank understood will perfect great "
                         "done alright gotcha roger absolutely certainly".split())
_SPECIFIC = re.compile(r"(?<=[^\s.!?]\s)(?!I\b|I')[A-Z][\w'-]*|[\w:/.-]*\d[\w:/.-]*")


#: The assistant speaking of what it will do ("I'll use June 3"), and the verbs a claim of
#: its own would need ("Lisbon has great food").
_OWN_DOING = re.compile(r"\b(?:i'll|i will|i've|i have|i'm|i am|let me|we'll)\b", re.IGNORECASE)
_CLAIMING = re.compile(r"\b(?:is|are|was|were|has|have|had|\w+'s)\b", re.IGNORECASE)


def _claims_nothing(text: str) -> bool:
    """An acknowledgement that says what the assistant will do, or names things without a
    verb ("Sure, Nopa on Saturday, party of six."), rather than claiming something itself."""
    return _OWN_DOING.search(text) is not None or _CLAIMING.search(text) is None


def _specifics(text: str) -> set[str]:
    """What an acknowledgement could add to the turn it answers: names and numbers (number
    words as digits)."""
    found = {as_digit(stem(w)) for m in _SPECIFIC.findall(text) for w in words(m)}
    return found | {d for w in words(text) if (d := as_digit(w)).isdigit()}


#: Longest bare exclamation that is a reaction ("Four cats!", "Two weeks in Peru!").
EXCLAMATION_WORDS = 4
