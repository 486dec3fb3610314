"""Reading English statements into slotted claims: who, which attribute, which value, and how
it is said (tense, negation, change, correction, hedge). Pure and deterministic.

The reading is rule-based but general: a clause is split into a holder (I, we, my sister
Carla, Ana), an auxiliary run (don't, no longer, used to, was, will), a main verb reduced to
its lemma by ``lemminflect`` and a complement. A verb class table maps (lemma, preposition)
to an attribute (live in → lives_in, work at → works_at); a verb outside the table still
gives a multi-valued claim keyed by the verb (``user.plays.guitar``).

Speakers. In a user turn "I"/"my" is the user and "you" is the assistant (not extracted). In
an assistant turn "you" is the user and "I" is the assistant (not extracted); an assistant's
"you live in Porto" is a restatement, so it gets confidence 0.55, too low to overwrite what
the user said (decisions need 0.6), enough to be kept as a candidate claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

from strata_recall.domain.slots import (
    content_words,
    is_single_valued,
    lemminflect_module,
    singular_nouns,
    slot_key,
    slug,
)
from strata_recall.domain.text import STOPWORDS

_I = re.IGNORECASE




USER = "user"
PROJECT = "project"

# -- whole clauses that carry nothing ---------------------------------------------------------
_INTERJECTION = (r"(?:hi|hello|hey|yo|hmm+|h+m+|um+|uh+|oh|ah|well|ok|okay|k|cool|great|sure|"
                 r"yes|yeah|yep|yup|no|nope|nah|lol|lmao|haha+|hehe|wow|nice|awesome|perfect|"
                 r"right|alright|thanks|thank you|thx|ty|np|cheers|bye|goodbye|brb|gtg|omg|"
                 r"oops|sorry|indeed|exactly|true|fine|good|interesting|welcome|gm|gn|"
                 r"don't judge|no judgment|ugh+|argh+|meh|blah)")
_CHATTER = re.compile(
    rf"^(?:(?:{_INTERJECTION}|"
    r"let me (?:think|see|check|look|know|try)(?: about it| on it| it over)?|let's see|"
    r"not sure(?: yet)?|"
    r"(?:i was|i'm|i am|just) wondering|i wonder|quick question|random question|"
    r"(?:that's|that is) (?:it|all)(?: for now)?|"
    r"(?:i'll|i will|i'm going to|will) (?:remember|note|keep|bear)\b.*|"
    r"(?:got it|noted|understood|i see|makes sense|fair enough|no worries|no problem|"
    r"sounds (?:good|great|fine|perfect|like a plan)|good to know|glad to help|"
    r"you're welcome|of course|will do|see you(?: later| soon| tomorrow)?|"
    r"talk (?:to you )?(?:later|soon)|"
    r"good (?:morning|night|evening|afternoon)|how are you|what's up|never ?mind|"
    r"thanks? (?:you )?(?:so much |a lot )?(?:for .*)?|that's (?:great|cool|nice|funny|"
    r"awesome|helpful|interesting|good)|me too|same here|(?:nice|good|great) (?:one|job|work|call|"
    r"point|idea|catch)|well done|love (?:it|that)|not bad|no way|agreed|same|fair|"
    r"(?:that|this) (?:is|was) (?:great|cool|nice|funny|awesome|helpful|interesting|good)|"
    r"(?:that's|that is|so|how) (?:so )?(?:hilarious|amazing|wild|crazy|sad|lovely|sweet|"
    r"cute|weird|annoying|frustrating)|too bad|what a shame|"
    r"you(?:'re| are)? (?:rock|the best|awesome|amazing|a lifesaver|a star|a legend)|"
    r"for sure|totally|definitely|absolutely|of course|you bet|ha|heh|"
    r"(?:ugh+|argh+) [a-z]+|"  # "ugh mondays": a lament, no claim
    r"that's (?:enough|all|it) for (?:today|now|tonight|the day)))[\s!.,:;)(-]*)+$",
    _I,
)
_QUESTION = re.compile(r"^(?:whats|hows|wheres|whos|whens|"
                       r"what|who|where|when|why|how|which|can|could|would|should|do|does|"
                       r"did|is|are|will|shall|may)\b", _I)

# -- lead-ins ---------------------------------------------------------------------------------
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|don't forget|do not forget|never forget|note|keep in mind|"
    r"for the record|fyi)(?:\s+(?:this|that))?\s*(?:[:,-]\s*|\s+that\s+|\s+)", _I)
_FILLER = re.compile(rf"^(?:(?:{_INTERJECTION}|so|also|and|but|btw|by the way|anyway|"
                     r"wait|no wait|oh and|basically|honestly|heads up|guess what|right(?=,)|"
                     r"just so you know|just so u know|for the record|fyi|for context|"
                     r"for reference|context|background|"
                     r"hang on|hold on|one sec|"
                     r"sadly|unfortunately|luckily|fortunately|thankfully|happily|finally|"
                     r"remind me|reminder|note to self|"
                     r"(?:good|great|big|some|bad|sad) news|fun fact|fwiw|"
                     r"for what it's worth|"
                     # "for the pharmacy form my number is …": what it is for, then the claim
                     r"for (?:the|my|this|that|our|a|an) (?:[a-z'-]+ ){0,3}?(?:forms?|app|"
                     r"profile|account|application|registration|paperwork|sign-?up|intake|"
                     r"records?|file|booking|reservation|order|appointment|visit|trip|"
                     r"calculator|quote|claim)(?: stuff| things?)?(?=,?\s+(?:my|i|i'm|our|we)\b))"
                     r"\s*[,!.:—–]?\s+)+",
                     _I)
#: The speaker saying that what they said was wrong ("i typed it wrong", "i keep getting it
#: wrong", "i told u wrong"): a correction follows (here and in ``domain/turn_succession.py``).
SAID_IT_WRONG = (r"i (?:(?:keep|kept) )?(?:got|had|getting|typed|wrote|said|told (?:you|u)|"
                 r"gave (?:you|u)|put|entered|spelled)(?: (?:that|it|this|them|the \w+(?: \w+)?|"
                 r"(?:my |our )?\w+'s \w+))?"
                 r" wrong(?:ly)?")
_CORRECTION = re.compile(
    # a lead before it: "wait no scratch that", "oh for that reminder — sorry i meant"
    r"^(?:(?:oh|wait|no|hmm+|hold on|hang on)[,!.\s]+|(?:oh\s+)?(?:for|about|re:?) (?:that|the|"
    r"this|my) [\w' -]{1,30}?\s*[—–:,-]\s*){0,3}"
    r"(?:actually|(?:(?:a\s+)?(?:quick|small|little|short|big|minor|major|status|life|"
    r"job|work|important|one)\s+)?(?:correction|update)(?: (?:on|about|re|for|to) (?:the|that|"
    r"my|this) [\w' -]{1,30}?(?=\s*[,:!.–—-]))?|to correct myself|scratch that|"
    # "the email i gave u is wrong"
    r"(?:the|that) [\w' -]{1,25}? i (?:gave|sent|told) (?:you|u)(?: earlier| before)? "
    r"(?:is|was) (?:wrong|off|incorrect|old|outdated)|"
    r"(?:i was|that was|that's|that is) (?:wrong|not right|incorrect|a mistake)"
    r"(?: about (?:that|this|it))?(?: earlier| before| there)?|i made a mistake(?: earlier)?|"
    r"i (?:misspelled|misspelt|mistyped) (?:it|that|the name|his name|her name|their name)|"
    r"wrong (?:time|date|day|place|room|number|name|address)|"
    r"i misspoke|i (?:miscounted|misread|misheard)(?: (?:it|that|this|the [\w-]+))?|"
    r"my mistake|my bad|typo (?:earlier|before|there|above)|"
    rf"{SAID_IT_WRONG}(?: earlier| before| there)?|i was mistaken|"
    r"(?:damn |stupid )?autocorrect|"
    r"change of (?:plans?|venue|date|time|location|schedule|address)|"
    r"(?:the )?plans? (?:have )?changed|"
    r"plot twist|(?:oops|whoops)[,!.]?\s*(?:typo|my bad|my mistake)?|typo|"
    r"let me correct (?:that|myself)|(?:sorry|oops|no|wait)[,]?\s*i meant|"

    r"i meant(?: to say)?|i mean(?=\s+(?-i:[A-Z0-9]))|as of (?:today|now|this (?:week|month|year))|"
    r"(?:it\s+|as it\s+)?turns out|i (?:just )?(?:found out|realized|realised|learned|"
    r"learnt)(?=\s+(?:that|i|i'm|my|we|our)\b))\b"
    r"(?:\s*[,:!.–—-]+)?\s*(?:that\s+)?",
    _I)
#: A lead-in that corrects what was just said when only a value follows ("Sorry, Porto.",
#: "Oops, Wednesday", "No wait, Friday"); before a whole clause it is only an apology.
_BARE_CORRECTION = re.compile(r"^(?:sorry|oops|whoops|oh wait|no wait|wait,? no|wait|no|"
                              r"i mean)\s*[,.!:;–—-]+\s*(?=\S)", _I)
#: "Oh wait, …", "Hold on, no, …": what follows corrects what was said.
_WAIT_LEAD = re.compile(r"^(?:(?:oh|no),?\s+)?(?:wait|hold on)(?:,?\s*no)?\s*[,:!.–—-]", _I)
#: "Sorry, his name is Zack.": an apology before a claim of an attribute corrects it (before
#: another clause it is only an apology: "Sorry, I'm late.").
_SORRY_LEAD = re.compile(r"^(?:sorry\s*[,:!.–-]|(?:oops|whoops|my bad|oh no)\s*[,:!.–-]?)\s*", _I)
#: A correction said after the claim: "Her name is Ellie, actually."
_ACTUALLY_TAIL = re.compile(r",?\s+(?:actually|in fact|to be exact)$", _I)
#: An age said as a value: "4 years old", "4".
_AGE = re.compile(r"^(?P<n>\d{1,3})(?: (?:years?|yrs?) old)?$", _I)
#: "is actually 5": a correction said inside the clause.
_INLINE_ACTUALLY = re.compile(r"\b(?P<be>is|are|was|am|'s|'m|'re) actually\b", _I)
#: "it's X", "that's X": the value a bare correction gives, with a pointing subject.
_IT_IS = re.compile(r"^(?:it|that)(?:'s| is| was)(?: (?:called|named))?\s+(?=\S)", _I)
#: A day of the month: "the 15th".
_DAY_OF_MONTH = re.compile(r"^the \d{1,2}(?:st|nd|rd|th)$", _I)
#: "I was wrong about the offsite, it's in Sonoma": "it" is the thing named.
_WRONG_ABOUT = re.compile(r"^(?:i was|i'm|i am|i got it) wrong about (?P<x>(?:the|my|our) "
                          r"[\w' -]+?),\s*(?:it|that)(?:'s|\s+is)\s+", _I)
#: "Clarke, with an e", "Lilly with two Ls": how the name just said is spelled.
_SPELLING_TAIL = re.compile(r",?\s+(?:with|w/)\s+(?:an?|one|two|double|2)\s+(?:[a-z]|[A-Z]'?s)"
                            r"(?=[\s.!]*$)")
#: "he spells it John", "it's spelled Jon": a name's spelling corrected, said as the name.
_SPELLED = re.compile(r"\b(?:(?:he|she|they|it) (?:spells?|is spelled|'s spelled) (?:it |his name |"
                      r"her name |their name |the name )?|(?:it's|it is) spelled |spelled )"
                      r"(?=(?-i:[A-Z])[\w'-]*[.!]?$)", _I)
#: "Not Thursday, Friday.": the wrong value first, then the right one.
_NOT_FIRST = re.compile(r"^not (?P<old>[^,]{1,30}),\s*(?P<new>[^,.!]{1,30}?)(?=[.!]?$)", _I)
#: Longest value (in words) a bare correction gives ("Springfield, Missouri").
FRAGMENT_WORDS = 4
#: Longest correction whose subject only points back ("Sorry, it lands at 8 pm.").
POINTING_WORDS = 8
_HEDGE_LEAD = re.compile(r"^(?:i think|i guess|i believe|i suppose|i heard|maybe|perhaps|"
                         r"probably|possibly|apparently|supposedly|i'm not sure but|"
                         r"not sure but)\b,?\s*(?:that\s+)?", _I)
_HEDGE_INSIDE = re.compile(r"\b(?:maybe|perhaps|probably|possibly|might|may be|i think|"
                           r"not sure|kind of|sort of|i guess)\b", _I)
_NOT_TAIL = re.compile(r",\s*(?:and\s+)?not\s+(?P<old>[^,]+?)$|"
                       r"(?<=\d)\s+not\s+(?P<old_number>\d[^,\s]*)$", _I)  # "5'10 not 5'9"
_NOT_PAREN = re.compile(r"\s*\((?:[\w'-]+\s+){0,2}not\s+[\w'-]+\)", _I)
_TAG_QUESTION = re.compile(r",\s*(?:right|yes|correct|yeah|ok|okay|true|isn't it|don't you|"
                           r"didn't you|aren't you)\s*[?!.]*$", _I)
_INSTEAD = re.compile(r"\s+(?:instead of|rather than|over)\s+(?P<old>.+)$", _I)
_PREFER_OVER = re.compile(r"\s+(?:instead of|rather than|over|to)\s+(?P<old>.+)$", _I)
_FROM_TO = re.compile(r"^(?:(?P<pre>.*?)\s+)?from\s+(?P<old>.+?)\s+to\s+(?P<new>.+)$", _I)

# -- the shape of a clause --------------------------------------------------------------------
_AUX = {
    "do": "", "does": "", "did": "past", "don't": "neg", "doesn't": "neg", "didn't": "neg past",
    "do not": "neg", "does not": "neg", "did not": "neg past", "not": "neg", "never": "neg",
    "no longer": "neg change", "am": "be", "'m": "be", "is": "be", "are": "be", "'re": "be",
    "was": "be past", "were": "be past", "isn't": "be neg", "aren't": "be neg",
    "wasn't": "be neg past", "weren't": "be neg past", "have": "perf", "has": "perf",
    "'ve": "perf", "had": "perf past", "haven't": "perf neg", "hasn't": "perf neg",
    "been": "be", "will": "future", "'ll": "future", "won't": "future neg",
    "would": "hedge", "might": "hedge", "may": "hedge", "could": "hedge", "can": "",
    "can't": "neg", "cannot": "neg", "used to": "past", "probably": "hedge",
    "maybe": "hedge", "perhaps": "hedge", "possibly": "hedge", "apparently": "hedge",
    "now": "change", "currently": "", "still": "", "always": "habit", "usually": "habit",
    "typically": "habit",
    "often": "habit", "mostly": "", "mainly": "", "generally": "habit", "normally": "habit",
    "really": "", "also": "", "just": "", "recently": "change", "finally": "change",
    "actually": "change", "officially": "change", "even": "", "already": "", "totally": "",
    "absolutely": "", "strongly": "", "definitely": "", "kinda": "", "newly": "change",
}
_AUX_RE = re.compile(r"^(?:" + "|".join(sorted((re.escape(a) for a in _AUX), key=len,
                                               reverse=True)) + r")(?=\s|$)", _I)
_RELATIVES = ("sister", "brother", "mother", "father", "mom", "mum", "dad", "wife", "husband",
              "partner", "son", "daughter", "friend", "boss", "manager", "colleague", "cousin",
              "aunt", "uncle", "girlfriend", "boyfriend", "roommate", "neighbor", "neighbour",
              "grandmother", "grandfather", "niece", "nephew", "cofounder", "co-founder",
              "teacher", "doctor", "coworker", "best friend", "parents", "kids", "children",
              "grandma", "grandpa", "granddad", "grandad", "grandparents", "stepmom", "stepdad",
              "fiance", "fiancee", "fiancé", "fiancée", "mother-in-law", "father-in-law",
              "brother-in-law", "sister-in-law", "in-laws", "parents-in-law", "twins", "housemate",
              "flatmate")
#: The people a speaker names by relation ("my sister", "Tom's boss").
RELATIVES = _RELATIVES
_NAME = r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?"
_RELATIVE_NAMED = re.compile(rf"^(?:{'|'.join(_RELATIVES)}) {_NAME}$")
_ANOTHER_HOLDER = re.compile(rf"^(?:(?i:(?:my|our)\s+(?:{'|'.join(_RELATIVES)}))\b|{_NAME}'s\s)")


def about_another(text: str) -> bool:
    """Whether a sentence is about someone the speaker names ("My brother drives a Civic",
    "Tom's manager is Priya"), not about the speaker."""
    return _ANOTHER_HOLDER.match(text.strip()) is not None
_HOLDER = re.compile(
    rf"^(?:(?P<i>[Ii])(?=\s|'m|'ve|'d|'ll)|(?P<we>[Ww]e)(?=\s|'re|'ve|'ll)|"
    rf"(?P<you>[Yy]ou)(?=\s|'re|'ve)|(?P<pron>[Hh]e|[Ss]he|[Tt]hey)(?=\s)|"
    rf"[Mm]y (?P<rel>{'|'.join(_RELATIVES)})"
    rf"(?:,?\s+(?P<relname>{_NAME}),?)?(?=\s)|"
    rf"(?P<owner>{_NAME})'s (?P<orel>{'|'.join(_RELATIVES)})"
    rf"(?:,?\s+(?P<orelname>{_NAME}),?)?(?=\s)|"
    rf"(?P<name>{_NAME}(?:\s+{_NAME})?)(?=\s|'s\s))")
_PRONOUN_LIKE = frozenset("""the a an this that these those it he she they there here what
    which who my our your his her their its if when while because after before then also so
    and but or today yesterday tomorrow everyone someone nobody everything nothing all some
    please let maybe perhaps probably""".split())

# Attribute nouns in "my X is Y": the noun phrase → the attribute it names.
_ATTRIBUTE_NOUNS = {
    "phone": "phone", "phone number": "phone", "number": "phone", "cell": "phone",
    "mobile": "phone", "mobile number": "phone", "email": "email", "email address": "email",
    "e-mail": "email", "address": "address", "home address": "address", "name": "name",
    "first name": "name", "full name": "name", "birthday": "birthday", "birth date": "birthday",
    "date of birth": "birthday", "birthdate": "birthday", "age": "age",
    "bedtime": "bedtime",
    "boss": "manager", "manager": "manager", "editor": "editor", "employer": "employer",
    "company": "employer", "job": "job_title", "role": "job_title", "title": "job_title",
    "job title": "job_title", "position": "job_title", "wife": "partner",
    "husband": "partner", "partner": "partner", "girlfriend": "partner",
    "boyfriend": "partner", "salary": "salary", "rent": "rent", "timezone": "timezone",
    "time zone": "timezone", "hometown": "from", "home": "lives_in", "hobby": "hobby",
    "hobbies": "hobby",
    "allergy": "allergy", "allergies": "allergy", "budget": "budget", "deadline": "deadline",
    "dog": "has_pet", "cat": "has_pet", "pet": "has_pet", "nationality": "nationality",
}
_IDENTITY = frozenset({"name", "job_title", "works_at", "employer"})
_PROFILE = frozenset({"lives_in", "from", "age", "birthday", "phone", "email", "partner",
                      "address", "timezone", "speaks", "allergy", "born_in", "grew_up_in",
                      "nationality", "has_pet", "manager", "salary", "located_in"})
_PREFERENCE = frozenset({"likes", "dislikes", "prefers"})
_PETS = frozenset("dog dogs cat cats puppy kitten parrot hamster rabbit fish turtle snake bird "
                  "horse guinea pig ferret retriever labrador poodle terrier spaniel bulldog "
                  "beagle husky shepherd dachshund collie corgi pug chihuahua tabby".split())
_ROLE_NOUNS = frozenset(
    """engineer developer manager designer scientist analyst teacher student doctor nurse
    lawyer consultant founder ceo cto cfo coo researcher architect intern lead director writer
    accountant programmer professor lecturer administrator admin sre devops owner officer
    editor journalist pharmacist dentist physician therapist chef recruiter marketer
    salesperson cook baker driver pilot firefighter electrician plumber carpenter mechanic
    artist musician photographer librarian veterinarian vet paramedic surgeon economist
    translator tutor coach freelancer contractor cashier waiter waitress barista farmer
    scientist biologist chemist physicist mathematician professor principal officer clerk
    secretary assistant receptionist technician specialist coordinator educator clinician
    instructor trainer counselor counsellor advisor adviser planner supervisor executive
    producer strategist paralegal bartender server associate representative rep agent tech
    hygienist dietitian nutritionist midwife caregiver nanny""".split())
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "language": ("python", "java", "javascript", "typescript", "go", "golang", "rust", "c++",
                 "ruby", "kotlin", "swift", "scala", "php", "elixir", "haskell", "clojure"),
    "editor": ("vim", "neovim", "emacs", "vscode", "vs code", "visual studio code", "intellij",
               "pycharm", "sublime", "nano", "zed", "cursor", "helix"),
    "os": ("linux", "macos", "windows", "ubuntu", "arch", "fedora", "debian"),
    "database": ("postgres", "postgresql", "mysql", "sqlite", "mongodb", "redis", "dynamodb",
                 "cassandra", "mariadb", "clickhouse", "duckdb"),
    "cloud": ("aws", "gcp", "azure", "google cloud", "hetzner", "heroku", "vercel"),
    "theme": ("dark mode", "light mode", "dark theme", "light theme"),
    "phone": ("iphone", "pixel", "galaxy", "oneplus", "motorola", "nokia", "xiaomi",
              "blackberry"),
    "drink": ("coffee", "tea", "espresso", "green tea", "decaf", "matcha"),
    "shell": ("bash", "zsh", "fish", "powershell"),
    "browser": ("firefox", "chrome", "safari", "brave"),
    "indentation": ("tabs", "spaces"),
}
_TIME = (r"(?:last|this|next|every) (?:week|month|year|weekend|semester|term|quarter|spring|"
         r"summer|fall|autumn|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday|night|morning|evening|"
         r"day)|yesterday|"
         r"today|tonight|recently|lately|a while ago|(?:a few|a couple of|two|three|\d+) \w+ ago|"
         r"since (?:(?:my|his|her|their|our|the) \w+(?: \w+)?|\w+(?: \d{4})?)|"
         r"(?:in|on|until|till|back in|for) (?:\d{4}|january|february|march|"
         r"april|may|june|july|august|september|october|november|december|the past \w+|"
         r"(?:a|\d+|two|three|many|several) (?:years?|months?|weeks?|days?))(?: \d{4})?|"
         r"right now|now|anymore|any more|these days|nowadays|at the moment|currently|instead|"
         r"too|"
         r"as well|for now|from now on|again|already|full[- ]time|part[- ]time|"
         r"(?:starting|beginning|as of|effective|from) (?:today|now|tomorrow|"
         r"(?:this|next|last) \w+|"
         r"\w+day|(?:january|february|march|april|may|june|july|august|september|october|"
         r"november|december)(?: \d{1,2})?)|"
         r"(?:in|during|over) the (?:spring|summer|fall|autumn|winter|morning|evening|weekend)|"
         r"on (?:the )?(?:weekends?|weekdays|weeknights|(?:mon|tues|wednes|thurs|fri|satur|sun)"
         r"days)|at (?:the )?weekends?|in the (?:mornings|evenings|afternoons)|at night|"
         r"(?:early|late) (?:this|last|next) \w+|earlier today|earlier|at the moment|"
         r"in (?:years|ages|months|forever|a long time)")
_TIME_TAIL = re.compile(rf"(?:,?\s+(?:(?:since|as of|starting|from) )?(?:{_TIME}))+$", _I)
_TIME_HEAD = re.compile(rf"^(?:(?:{_TIME})(?:,?\s+|$))+", _I)
_PAST_TIME = re.compile(r"\b(?:last (?:week|month|year|weekend|summer|winter|spring|fall|"
                        r"night)|yesterday|ago|back in|in \d{4})\b", _I)
_TRAIL = re.compile(r"[\s.!;:,]+$")
#: A lead-in time that starts something ("Starting this week, ..."); "now" and "from now on"
#: are change cues anywhere in a clause already (``_CHANGE_TAIL``).
_STARTING = re.compile(r"\b(?:starting|beginning|as of|effective|from (?=next|tomorrow|"
                       r"(?:mon|tues|wednes|thurs|fri|satur|sun)day))\b", _I)
#: Asides at the end of a clause that say nothing about its claim.
_ASIDE_TAIL = re.compile(r",\s*hopefully\b[^,]*$|"
                         r",\s*(?:this|that)(?:'s| is| was)\s+(?:nothing|normal|fine|crazy|wild|"
                         r"nuts|great|awful|so \w+)\b[^,]*$|"
                         r",\s*(?:days|nights|weekends|weekdays|mornings|evenings) only[\s.!]*$|"
                         r"(?:,?\s+(?:by the way|btw|fyi|though|as i said|as i mentioned|my bad|"
                         r"my mistake|sorry|sry|srry|soz|"
                         r"like i said|you know|just so you know|for what it's worth|"
                         r"if you remember|in case you forgot|after all|lol|lmao|rofl|"
                         r"ha(?:ha)+|he(?:he)+|ugh+|tbh|ngl)\b[\s.!,]*)+$|"
                         # a bare verdict: why, not another object ("I sold the car, too old")
                         r",\s*(?:(?:it|i|he|she|they)\s+)?(?:was\s+|were\s+|got\s+)?"
                         r"(?:(?:way|far|much|just|a bit|a little)\s+)?(?:too|so)\s+"
                         r"[a-z]+(?:\s+(?:out|up|down|off))?[\s.!]*$|"
                         r",\s*(?:not|wasn't|isn't) worth it[\s.!]*$|"
                         # what it did to them ("stopped the melatonin, it was giving me
                         # weird dreams")
                         r",\s*(?:it|that|they)\s+(?:was|were|is|are|kept|keeps)\s+(?:giving|"
                         r"making|causing|messing|killing|wrecking|upsetting|hurting)\b[^,]*$|"
                         # what the assistant should do about it ("i'm a type 1 diabetic so
                         # watch the carbs", "… so no pb in the lunchbox ideas pls")
                         r"\s+so\s+(?:(?:pls|please)\s+)?(?:no(?!\s+(?:more|longer)\b)|don't|"
                         r"dont|watch|avoid|keep|"
                         r"make sure|remember|skip|go easy|nothing with)\b.*$|"
                         # a measure beside it ("i'm 5'8 with a 31 inch inseam")
                         r"(?<=[\d'\"])\s+with (?:a|an) \d[^,]*$|"
                         # a remark on the telling ("…, shouldve said that first lol")
                         r",\s*(?:i\s+)?(?:should(?:'ve|ve| have)|forgot to|meant to) (?:said|say|"
                         r"mentioned|mention|told|tell)\b[^,]*$|"
                         # how it went wrong ("plate is 8KTR329, swapped the last 2 digits")
                         r",\s*(?:i\s+)?(?:swapped|mixed up|mixed|misread|mistyped|flipped|"
                         r"transposed|typed it wrong|got it wrong)\b[^,]*$|"
                         # when it is needed ("my number is 07700 900123 if the form needs it")
                         r",?\s+(?:if|in case|whenever) (?:the|you|u|they|it|that|anyone|"
                         r"someone|needed|necessary|required)\b[^,]*$|"
                         # what it leads to ("started at monzo, so that headline needs redoing")
                         r",?\s+so (?:that|this|the|my|it|you|u) [\w' -]+ (?:needs?|has to|"
                         r"have to|should|must)\b.*$|"
                         # what it is needed for ("my plate is 7KDM392, need it for the form")
                         r",\s*(?:(?:i|we)\s+)?need (?:it|this|that|them) for\b[^,]*$|"
                         # what it is said for ("i'm AB+, for the donation drive")
                         r",\s*for (?:the|my|our|this|that|a|an) [\w' -]{1,30}[\s.!]*$|"
                         # an instruction beside it ("standup at 9:15, dont schedule anything
                         # then")
                         r",\s*(?:(?:so|and)\s+)?(?:(?:pls|please)\s+)?(?:don't|do not|never|"
                         r"dont)\s+(?:schedule|book|put|plan|suggest|send|call|text|add|"
                         r"recommend|give|serve|order)\b.*$|"
                         # what the speaker is after ("a barista but want to get into UX")
                         r"\s+(?:but|and)\s+(?:(?:i|i'd|we)\s+)?(?:really\s+)?(?:want|wanna|"
                         r"hope|plan|would like|'d like|am trying|'m trying)\s+to\b.*$|"
                         # what the change gains ("switched to progressive, saving 40/mo")
                         r",\s*(?:and\s+)?(?:saving|saves|save|cheaper|way cheaper)\b[^,]*$|"
                         # what the user is after, beside the claim ("I smoke half a pack a
                         # day, trying to cut down"): an aim, not a part of the value
                         r",\s*(?:(?:and|but|so)\s+)?(?:i'm\s+|i am\s+)?(?:trying|hoping|"
                         r"planning|looking|working|aiming|wanting)\s+to\s+[^,]+[\s.!]*$|"
                         # what it is for: "i'm 5'9 btw, for the bike sizing thing"
                         r"(?:,?\s+(?:btw|fyi|by the way))?,?\s+for (?:the|my|your|a) "
                         r"[\w' -]{1,30}?(?:thing|form|stuff|quote|application|signup|sign-up)"
                         r"[\s.!]*$|"
                         # why it is told: "my cell is 614-555-0192 if you need it for the form",
                         # "… btw, in case it matters for the donation drive"
                         r"\s+if (?:you|u) (?:ever )?need (?:it|that|this|them)\b.*$|"
                         # a condition of a request: "… when you suggest recipes"
                         r"\s+when (?:you|u) (?:\w+ )?(?:suggest|recommend|plan|book|order|"
                         r"pick|make|send|schedule|look)\b.*$|"
                         r"(?:,?\s+(?:btw|fyi|by the way))?,?\s+(?:just )?(?:in case|if (?:that|it|"
                         r"this) (?:ever )?(?:matters|helps|counts|comes up))\b.*$|"
                         # what the user asks for beside it ("I'm 185 cm, need a new wetsuit
                         # size recommendation"): a request, not a part of the value
                         r",\s*(?:(?:i|we)\s+)?need\s+(?:a|an|some)\s+(?:new\s+)?[\w-]+[\s.!]*$|"
                         r",\s*(?:(?:i|we)\s+)?(?:need|have|got|want) to\s+(?!be\b)[^,]+[\s.!]*$|"
                         r",\s*(?:(?:and|but|so)\s+)?(?:(?:i|we)\s+)?(?:need|want|would like)\s+"
                         r"(?:(?:a|an|some|the|your)\s+)?(?:[\w-]+\s+){0,4}?(?:help|ideas?|tips?|"
                         r"advice|suggestions?|recommendations?|recs?)\b[^,]*[\s.!]*$", _I)
#: "I'd rather have tea than coffee" says what "I prefer tea over coffee" says.
def _without_asides(text: str) -> str:
    """``text`` without the asides at its end, one after another ("priya's my partner btw,
    shouldve said that first lol")."""
    for _ in range(3):
        trimmed = _ASIDE_TAIL.sub("", text)
        if trimmed == text:
            break
        text = trimmed
    return text


_RATHER = re.compile(r"\bwould rather (?:have|drink|eat|use|take|go with|get) (?P<new>.+?) "
                     r"(?:than|over|instead of) (?P<old>.+)$", _I)
_ARTICLE = re.compile(r"^(?:the|a|an|some)\s+(?!(?:positive|negative)\b)", _I)  # "A positive"


@dataclass(frozen=True, slots=True)
class Statement:
    """One claim read from a clause; ``attribute`` is None for an unslotted mention."""

    holder: str  # "user", "person:ana", "project", "topic:launch"
    attribute: str | None
    value: str | None
    content: str
    kind: str = "semantic"
    importance: int = 4
    negated: bool = False
    explicit_change: bool = False
    hedged: bool = False
    pinned: bool = False
    tense: str = "present"  # "past", "present" or "future"
    confidence: float = 0.9
    holder_name: str = "User"
    entities: tuple[str, ...] = ()
    single: bool | None = None  # "my X is Y": one value per X, whatever X is

    @property
    def slot(self) -> str | None:
        if self.attribute is None:
            return None
        if self.value is None:  # "Jake moved out": the whole slot, whatever its value
            return f"{self.holder}.{self.attribute}" if self.single else None
        return slot_key(self.holder, self.attribute, self.value, single=self.single)


@dataclass(frozen=True, slots=True)
class _Manner:
    """How a clause is said, read from its lead-in and auxiliaries."""

    negated: bool = False
    change: bool = False
    hedged: bool = False
    pinned: bool = False
    past: bool = False
    future: bool = False
    habit: bool = False
    progressive: bool = False
    strong: bool = False  # love, hate, prefer: [002]'s strong preference


# -- lemmas -----------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def verb_lemma(word: str) -> str | None:
    """The verb lemma of ``word`` if the lexicon knows it as a verb form ("gave" → give)."""
    lemmas = lemminflect_module().getAllLemmas(word.casefold(), upos="VERB")
    return str(lemmas["VERB"][0]) if lemmas.get("VERB") else None


@lru_cache(maxsize=4096)
def unknown_word(word: str) -> bool:
    """A word the lexicon has no entry for: a name typed in lower case ("moved to
    pittsburgh", "joined stripe"), not a common word ("moved to days", "joined a gym")."""
    return len(word) > 2 and word.isalpha() and not lemminflect_module().getAllLemmas(
        word.casefold())


def is_noun(word: str) -> bool:
    """Whether the lexicon knows ``word`` as a noun."""
    return _is_noun(word)


@lru_cache(maxsize=4096)
def _is_noun(word: str) -> bool:
    return bool(lemminflect_module().getAllLemmas(word.casefold(), upos="NOUN"))


@lru_cache(maxsize=4096)
def inflect(lemma: str, tag: str) -> str:
    """``give`` + VBZ → gives, + VBD → gave; the lemma when the lexicon has no entry."""
    if lemma == "be":
        return {"VBZ": "is", "VBD": "was", "VBP": "are", "VBD_PL": "were"}.get(tag, "be")
    if " " in lemma:  # a phrasal verb: "work out" → "works out"
        head, particle = lemma.split(" ", 1)
        return f"{inflect(head, tag)} {particle}"
    forms = lemminflect_module().getInflection(lemma, tag=tag)
    return str(forms[0]) if forms else lemma


@lru_cache(maxsize=4096)
def is_past_form(word: str, lemma: str) -> bool:
    word = word.casefold()
    return word in (lemminflect_module().getInflection(lemma, tag="VBD") or ()) and word != lemma


# -- splitting ---------------------------------------------------------------------------------
_SENTENCES = re.compile(r"(?<!\bSt\.)(?<!\bSr\.)(?<!\bJr\.)(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)"
                        r"(?<!\bMrs\.)(?<!\bvs\.)"
                        r"(?<!\bst\.)(?<!\bdr\.)(?<!\bmr\.)(?<!\bms\.)(?<!\bmrs\.)"
                        r"(?<=[.!?;])\s+|\n+")
_JOINERS = re.compile(r",?\s+(?:and|but|so|while|whereas|although|though|because(?! of))\s+|"
                      r"\s+[—–]\s+(?=(?:i|we|my|i'm|i've)\s)|"
                      r",?\s+since\s+(?=(?:i|we|my)\s)|"
                      r",\s+(?=(?:i|we|my|our|i'm|i've)\s)|"
                      rf",\s+(?=(?-i:{_NAME})(?:'s\s+\w+)?\s+(?:is|are|was)\s)|"
                      r",\s+(?=(?:he|she)(?:'s)?\s+\w)|"
                      r",\s+(?=it(?:'s|\s+is|\s+was)\s+(?:just|only|too|so|all)\b)|"
                      r",\s+(?=(?-i:[a-z]+ing)\s+(?:(?:\w+\s+){0,4}?(?:instead|now|these days)\b|"
                      r"(?:in|at|as|for|with|on)\s))|"
                      r",\s+(?=the\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are|was|were|has|had|made|"
                      r"makes|said|says|told|gave|got|took|did|does|kept|keeps)\s)|"
                      r",\s+(?=(?-i:[a-z][a-z0-9]*)\s+(?:is|are|was|were)\s)(?!(?:which|that|this|it|there|what|"
                      r"who|where|here|one|mine|all|everything|nothing)\s)|"
                      r"[,;]\s+(?=(?:(?:and|but|so)\s+)?(?:now|today|these days|nowadays)\s+"
                      r"(?:i|we|my|i'm)\s)", _I)


#: "my manager is dana": the name a later "she" stands for.
_NAMED_BEFORE = re.compile(r"^(?:my|our) [\w' -]{1,30}? is (?:(?:dr|mr|mrs|ms)\.? )?"
                           r"(?P<name>[A-Za-z][a-z]+(?: [A-Z][a-z]+)?)$", _I)
#: A clause that says what its holder is ("I am 34", "my son is 7").
_BE_CLAUSE = re.compile(r"^(?:[\w' ]{1,30}?) (?:am|is|are|'m|'s)\s", _I)


def _being_listed(piece: str) -> list[str]:
    """"I am 34, 5'6, vegetarian, allergic to latex" as its parts, when each after the first
    can only say what the holder is; else the piece whole."""
    if "," not in piece or not _BE_CLAUSE.match(piece):
        return [piece]
    parts = [p.strip() for p in re.split(r",\s+(?:and\s+)?", piece) if p.strip()]
    if len(parts) < 2 or not all(_said_of_being(p) for p in parts[1:]):
        return [piece]
    return parts


def _said_of_being(piece: str) -> bool:
    """A piece that can only say what a holder is, listed after "I'm …": an age, a measure,
    a state ("vegetarian", "single"), an allergy, a role ("a paramedic")."""
    if _MEASURE_PIECE.match(piece) or re.fullmatch(r"\d{1,3}|\d'\s?\d{1,2}\"?", piece):
        return True
    if re.match(r"^(?:allergic|intolerant) to\s", piece, _I) or _state_claim(piece) is not None:
        return True
    role = re.fullmatch(r"(?:a|an) (?:[a-z]+ )?(?P<role>[a-z]+)", piece, _I)
    return role is not None and role["role"].casefold() in _ROLE_NOUNS


#: A measure said bare after another ("… and 170 lbs"): a clause of its own.
_MEASURE_PIECE = re.compile(r"^\d{2,3}(?:\.\d)?\s?(?:pounds|lbs?|kg|kilos|kilograms|stone|cm)$", _I)
#: "…, doing green tea instead": a participle saying what is done now, a clause of its own.
_GERUND_NOW = re.compile(r"^(?-i:[a-z]+ing)\s+(?:(?:\w+\s+){0,4}?(?:instead|now|these days)\b|"
                         r"(?:in|at|as|for|with|on)\s)", _I)
#: "…, pickup is at 3:15": a clause of its own about another thing, after a comma.
_NOUN_IS = re.compile(r"^[a-z][a-z0-9]*(?:\s+(?!(?:and|or|but|to|of|in|on|at|for|with)\b)"
                      r"[a-z][a-z0-9]*){0,2}\s+(?:is|are|was|were)\s")  # "spicy food is …"
_HE_SHE = re.compile(r"^(?:he|she)(?P<is>'s)?\s+", _I)
#: Titles before a name ("dr. okafor", "Mrs. Clark"), as a pattern and as words.
_TITLE_WORDS = frozenset({"dr", "mr", "mrs", "ms", "prof"})
_TITLE = "(?:" + "|".join(sorted(_TITLE_WORDS)) + ")"
#: A clause that ends naming someone by title ("… with dr. okafor"), and what one says of a
#: person by "she's my …".
_ENDS_WITH_TITLED_NAME = re.compile(rf"\b(?P<name>{_TITLE}\.? [A-Za-z][\w'-]+)$", _I)
_IS_MINE = re.compile(r"^(?:my|our) [a-z]+(?: [a-z]+)?\.?$", _I)
#: "it's just my cell now", "it was too old": an aside after a comma (``_JOINERS``).
_IT_ASIDE = re.compile(r"^it(?:'s|\s+is|\s+was)\s+(?:just|only|too|so|all)\b", _I)
_MY_RELATIVE = re.compile(rf"^my (?:{'|'.join(_RELATIVES)})$", _I)


def _named(subject: str) -> bool:
    """A subject a later "he"/"she" can stand for: a person's name, not "I", "we", "my X"."""
    first = subject.split()[0]
    return first[:1].isupper() and first.casefold() not in ("i", "we", "my", "our")


#: Verbs that give the assistant a task ("redo the sign", "book somewhere nice").
_TASK_VERBS = (r"(?:redo|write|rewrite|draft|book|find|check|help|give|show|tell|plan|suggest|"
               r"recommend|list|schedule|fix|translate|summari[sz]e|explain|compare|calculate|"
               r"convert|send|order|make|set up|look up|adjust|edit|proofread|draw|create|"
               r"generate|brainstorm|outline|use|keep|put|add|remove|cancel|text|email|look|"
               r"search|shop)")
#: Where a sentence ends though no full stop says so: a run of emoji ("i moved to pittsburgh
#: 📦📦 still unpacking"), or a comma or dash before a question or a request that follows the
#: claim ("i drink it with whole milk, how many calories is that", "our wifi password is
#: tangerine42 — can u write a sign with it", "…, redo the sign").
_UNMARKED_END = re.compile(
    "\\s*[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B50\u2B55\uFE0F\u200D]+\\s*|"
    r"\s+(?=(?:is that|is this|is it|are those|are these|should i|can i|do i|does that|"
    r"will that|would that)\b[^.!?,]{0,40}\??$)|"
    r"\s*(?:,|\s[—–-]|\s+so)\s+(?=(?:(?:and|so|but|also)\s+)?(?:(?:how|what|which|where|when|"
    r"why|who|can|could|would|should|will|do|does|did|is|are)\s+(?:\w+\s+){0,3}?(?:i|u|you|we|"
    r"my|it|that|this|there|they|their|your|his|her|our|a|an|the|he|she|him|them|me)\b|(?:how|what|whats|which|where|when|why|who|can|could|would|"
    r"should|will|do|does|did|is|are|any)\b[^.!]*\?|(?:what|how|where|who|when)'?s\b|"
    r"(?:is|are) there\b|(?:can|could|would|will)\s+(?:u|you|ya)\b|pls\b|plz\b|please\b|"
    r"help me\b|remind me\b|(?:what|anything) else\b|any (?:ideas|tips|recs|suggestions)\b|"
    rf"{_TASK_VERBS}\s+(?:me|us|it|this|that|these|those|the|a|an|my|our|some|up|them|"
    r"somewhere|something|for)\b))", _I)


def sentences(text: str) -> list[str]:
    return [s.strip() for part in _SENTENCES.split(text) if part
            for s in _UNMARKED_END.split(part) if s and s.strip()]


def _starts_clause(piece: str) -> bool:
    holder = _HOLDER.match(piece)
    return holder is not None and (piece.split()[0].casefold() not in _PRONOUN_LIKE
                                   or holder.group("rel") is not None)  # "my brother …"


def _starts_verb_phrase(piece: str) -> bool:
    words = piece.split()
    if len(words) < 2:
        return False
    first = words[0].casefold()
    if _AUX_RE.match(piece) and first not in ("so", "and"):
        return True
    return verb_lemma(first) is not None and (not _is_noun(first) or first in _verb_class_words())


_POSSESSIVE = frozenset({"my", "our", "the"})


def _starts_possessed_clause(piece: str) -> bool:
    """"my passport expires in May", "the weather is awful": a subject of one to three
    words after my/our/the, then a verb (an auxiliary, or a word that is a verb and no
    noun): a clause of its own after "and", not more of the one before."""
    words = piece.split()
    if len(words) < 3 or words[0].casefold() not in _POSSESSIVE:
        return False
    for at in range(2, min(5, len(words))):
        word = words[at].casefold()
        if _AUX_RE.match(" ".join(words[at:])) or (
                verb_lemma(word) is not None and (not _is_noun(word) or (  # "keeps coming"
                    at + 1 < len(words) and words[at + 1].casefold().endswith("ing")
                    and verb_lemma(words[at + 1].casefold()) is not None))):
            return True
    return False


def _starts_impersonal(piece: str) -> bool:
    """"it rains a lot", "there is a gym nearby": a clause with a subject that names
    nothing, never more of the value before it."""
    words = piece.split()
    return len(words) >= 2 and words[0].casefold() in ("it", "there") \
        and (_AUX_RE.match(" ".join(words[1:])) is not None
             or verb_lemma(words[1].casefold()) is not None)


def clauses(sentence: str) -> list[str]:
    """Split on conjunctions where a new clause starts; a shared subject is carried over
    ("I live in Porto and work at Acme" → "I live in Porto", "I work at Acme")."""
    pieces = [p for piece in _JOINERS.split(sentence) if piece for p in _being_listed(piece)]
    result: list[str] = []
    subject: str | None = None
    when = ""  # "Beginning next month, I live in Bergen": the time belongs to the next clause
    for piece in (p.strip() for p in pieces if p and p.strip()):
        if not _TIME_HEAD.sub("", piece).strip(" ,"):
            when = f"{when} {piece}".strip()
            continue
        piece, when = f"{when} {piece}".strip(), ""
        bare = _TIME_HEAD.sub("", piece)
        holder = _HOLDER.match(bare)
        pronoun = _HE_SHE.match(bare)
        if pronoun is not None and result:  # "Tom left Google, he joined Meta": Tom joined
            named = subject is not None and (_named(subject) or _MY_RELATIVE.match(subject)
                                             is not None)  # "my son …, he goes to …"
            verb = "is " if pronoun["is"] else ""  # "Dr. Huang is my dentist, she's great …"
            before = _NAMED_BEFORE.match(result[-1])  # "my manager is dana, she's …": dana
            subject = before["name"] if before is not None else subject
            last = _ENDS_WITH_TITLED_NAME.search(result[-1])
            if not named and verb and last is not None and _IS_MINE.match(bare[pronoun.end():]):
                # "need to reschedule w dr. okafor, she's my dentist": Dr. Okafor is
                result.append(f"{last['name'].title()} is {bare[pronoun.end():]}")
                continue
            result.append(f"{subject} {verb}{bare[pronoun.end():]}" if named else piece)
        elif holder is not None and _starts_clause(bare):
            subject = holder.group(0)
            result.append(piece)
        elif pronoun is not None and not result:  # "She sold her bike and got a scooter"
            subject = pronoun.group(0).strip()
            result.append(piece)
        elif result and (gone := _NO_MORE.match(bare)) and subject is not None \
                and (_named(subject) or _MY_RELATIVE.match(subject) is not None):
            result.append(f"{subject} no longer has {gone['x']}")  # "my son …, no more glasses"
        elif result and (_MY_ATTRIBUTE.match(bare) or _IS_MY.match(bare) or _NOUN_IS.match(bare)
                         or _starts_possessed_clause(bare) or _NO_MORE.match(bare)):
            result.append(piece)  # "..., so my manager is Aiko now": a claim of its own
        elif result and subject is not None and _said_of_being(bare) and \
                _BE_CLAUSE.match(result[-1]):
            # "I'm 34, 5'6, vegetarian, allergic to latex": each what the holder is
            be = "am" if subject.casefold() == "i" else "is"
            result.append(f"{subject} {be} {bare}")
        elif result and _GERUND_NOW.match(bare) and verb_lemma(bare.split()[0]):
            # "gave up coffee, doing green tea instead": what the holder does now (said with
            # no subject, the speaker)
            who = subject or "I"
            lemma = str(verb_lemma(bare.split()[0]))
            lemma = "have" if lemma == "do" else lemma  # "doing green tea": has it now
            verb = lemma if who.casefold() in ("i", "we", "they") else inflect(lemma, "VBZ")
            result.append(f"{who} {verb} {bare.split(' ', 1)[1]}")
        elif result and subject is not None and _starts_verb_phrase(piece):
            result.append(f"{subject} {piece}")
        elif result and _IT_ASIDE.match(bare):
            continue  # "I sold my car, it was too old": an aside on what was said
        elif result and _starts_impersonal(bare):
            result.append(piece)  # "I live in Paris and it rains a lot there": not the place
        elif result:
            result[-1] = f"{result[-1]} and {piece}"
        else:
            result.append(piece)
    if when:
        result.append(when)
    return result


# -- lead-in cues --------------------------------------------------------------------------
def is_chatter(clause: str) -> bool:
    """Greetings, acknowledgements, thinking aloud, questions: nothing to remember."""
    bare = _TRAIL.sub("", clause.strip())
    if not bare or clause.rstrip().endswith("?") or _QUESTION.match(bare) or _TASK.match(bare):
        return True
    return _CHATTER.match(bare) is not None or not content_words(bare)


#: A task given to the assistant ("redo the sign", "write me a toast", "pls book it"): a
#: request, not a claim.
_TASK = re.compile(r"^(?:(?:ok|okay|so|and|now|then)\s+)?(?:pls\s+|plz\s+|please\s+)?"
                   rf"{_TASK_VERBS}\s+(?:me|us|it|this|that|these|those|the|a|an|"
                   r"my|our|some|up|them|somewhere|something|for)\b", _I)


def _bare_value(text: str) -> bool:
    """Only a value: no pronoun or possessive leading it, no verb ("March 12", "Porto",
    "Springfield, Missouri"; not "I'm late", "that was fun")."""
    words = [w.strip(",.!?;:").casefold() for w in text.split()]
    if not words or words[0].split("'")[0] in _DEICTIC:
        return False
    return not any(_AUX_RE.match(w) or (verb_lemma(w) is not None and not _is_noun(w))
                   for w in words if w)


def read_manner(clause: str) -> tuple[str, _Manner]:
    """Strip lead-in cues ("remember:", "actually,", "I think") and report what they said."""
    clause = _SPELLED.sub("", clause)  # "Actually he spells it John": "Actually John"
    clause = _SPELLING_TAIL.sub("", clause)  # "Sorry, it's Mrs. Clarke, with an e."
    clause = _WRONG_ABOUT.sub(r"Actually, \g<x> is ", clause.strip())
    clause = _NOT_FIRST.sub(r"Sorry, \g<new>, not \g<old>", clause.strip())  # "Not X, Y."
    waited = _WAIT_LEAD.match(clause.strip()) is not None  # "Oh wait, I start at 9."
    sorry = _SORRY_LEAD.match(clause.strip())
    if sorry is not None and (_MY_ATTRIBUTE.match(clause.strip()[sorry.end():])
                              or _BARE_SLOT.match(clause.strip()[sorry.end():])):
        waited = True  # "oops plate is 8KTR329"
    text = _FILLER.sub("", clause.strip())
    pinned = _REMEMBER.match(text) is not None
    text = _FILLER.sub("", _REMEMBER.sub("", text, count=1))
    change = waited or _CORRECTION.match(text) is not None
    text = _CORRECTION.sub("", text, count=1)
    if change:  # "actually I had that wrong earlier, …": a second lead says the same
        text = _CORRECTION.sub("", _FILLER.sub("", text), count=1)
    # "Autocorrect — it's Evan, not Ethan", "Oh no, it's the 15th, not the 14th": the value
    if (change or _NOT_TAIL.search(_TRAIL.sub("", text))) and _IT_IS.match(text):
        rest = _IT_IS.sub("", text)
        head = _NOT_TAIL.sub("", _TRAIL.sub("", _REASON_TAIL.sub("", _TRAIL.sub("", rest))))
        if len(head.split()) <= FRAGMENT_WORDS and (head[:1].isupper() | head[:1].isdigit()
                                                    or _DAY_OF_MONTH.match(head) is not None) \
                and _bare_value(head):
            change, text = True, rest
    bare = _BARE_CORRECTION.match(clause.strip())
    value = _TRAIL.sub("", clause.strip()[bare.end():]) if bare is not None else ""
    first, comma, why = value.partition(",")
    if comma and _bare_value(first) and not _bare_value(why.strip()):
        value = first  # "Sorry, Saturday, her flight got changed."
    value = _IT_IS.sub("", value)  # "Wait no, it's at Zuma": the value alone
    head = _NOT_TAIL.sub("", value)  # "Sorry, it's called Mario's, not Luigi's"
    if (not change or waited) and value and len(head.split()) <= FRAGMENT_WORDS \
            and _bare_value(head):
        change, text = True, value  # "Sorry, Springfield, Missouri."
    hedged = _HEDGE_LEAD.match(text) is not None
    text = _HEDGE_LEAD.sub("", text, count=1)
    text = _TRAIL.sub("", _FILLER.sub("", text))
    actually = _ACTUALLY_TAIL.search(text)
    if actually is not None:  # "Her name is Ellie, actually."
        change, text = True, text[:actually.start()]
    inside = _INLINE_ACTUALLY.search(text)
    if inside is not None:  # "My cat is actually 5 years old."
        change, text = True, _INLINE_ACTUALLY.sub(r"\g<be>", text, count=1)
    hedged = hedged or _HEDGE_INSIDE.search(text) is not None
    return text, _Manner(change=change, hedged=hedged, pinned=pinned)


# -- verb classes ------------------------------------------------------------------------------
#: (verb lemma, preposition) → attribute. "" is a direct object. Phrasal verbs are one lemma.
_VERB_CLASSES: dict[str, dict[str, str]] = {
    "live": {"in": "lives_in", "at": "lives_in", "on": "lives_in", "with": "lives_with"},
    "reside": {"in": "lives_in"},
    "retire": {"to": "lives_in"},
    "weigh": {"": "weight"},
    "bank": {"with": "bank", "at": "bank"},
    "move": {"to": "lives_in", "into": "lives_in", "back to": "lives_in",
             "in with": "lives_with"},
    "relocate": {"to": "lives_in"},
    "work": {"at": "works_at", "for": "works_at", "as": "job_title", "on": "works_on"},
    "teach": {"at": "works_at"},
    "join": {"": "works_at"},
    "start": {"at": "works_at", "working at": "works_at", "working for": "works_at"},
    "report": {"to": "manager"},
    "grow up": {"in": "grew_up_in"},
    "speak": {"": "speaks"},
    "learn": {"": "learns"},
    "study": {"": "learns", "at": "school"},
    "like": {"": "likes"}, "love": {"": "likes"}, "enjoy": {"": "likes"},
    "adore": {"": "likes"},
    "dislike": {"": "dislikes"}, "hate": {"": "dislikes"}, "detest": {"": "dislikes"},
    "despise": {"": "dislikes"}, "loathe": {"": "dislikes"}, "stand": {"": "dislikes"},
    "prefer": {"": "prefers"},
    "visit": {"": "visited"}, "meet": {"": "met"}, "play": {"": "plays"},
    "drive": {"": "drives"},
    "marry": {"": "partner"}, "date": {"": "partner"},
    "use": {"": "uses"}, "switch": {"to": "uses"}, "migrate": {"to": "uses"},
    "own": {"": "has"}, "have": {"": "has"},
    "turn": {"": "age"},
}


@lru_cache(maxsize=1)
def _verb_class_words() -> frozenset[str]:
    """Built on first use: inflecting loads lemminflect's tables (~1.5 s), which a process
    that never reads English (``strata list``) should not pay at import."""
    return frozenset(
        w for lemma in _VERB_CLASSES for w in (lemma, inflect(lemma, "VBZ"), inflect(lemma, "VBD")))


_STRONG = frozenset({"love", "adore", "hate", "detest", "despise", "loathe", "prefer", "stand"})
_STOPPING = frozenset({"stop", "quit", "give up", "drop", "cut out", "leave",
                       # parting with something: "sold my car", "cancelled my gym membership"
                       "sell", "give away", "donate", "cancel", "trade in", "trade", "replace",
                       "delete", "close", "deactivate", "uninstall", "swap", "exchange",
                       "lose",
                       "shave off"})
#: "Rex passed away": what the user had (a pet, a person) is no longer there.
_DYING = frozenset({"die", "pass away"})
#: "my Fitness First membership": what was cancelled is Fitness First.
_HELD_THROUGH = re.compile(r"\s+(?:membership|subscription|account|plan|contract|pass)$", _I)
_PARTICLES = ("up", "over", "out", "off", "back", "down", "away")
_PHRASAL = frozenset({"give up", "grow up", "hand over", "cut out", "work out", "find out",
                      "shave off",
                      "show up", "hang out", "pick up", "set up", "sign up", "give away",
                      "pass away", "trade in"})
#: "be" + preposition/adjective → attribute.
_BE_CLASSES = {
    "from": "from", "originally from": "from", "based in": "lives_in", "living in": "lives_in",
    "married to": "partner", "engaged to": "partner", "allergic to": "allergy",
    "born in": "born_in", "born on": "birthday", "in": "located_in", "at": "located_in",
    "promoted to": "job_title", "employed at": "works_at", "employed by": "works_at",
    "employed with": "works_at", "working at": "works_at", "working for": "works_at",
    "to": "visited",
}
#: How an attribute reads in a sentence: (verb lemma, preposition) or ("'s", noun).
_VERB_PHRASE: dict[str, tuple[str, str]] = {
    "lives_in": ("live", "in"), "works_at": ("work", "at"), "job_title": ("work", "as"),
    "works_on": ("work", "on"), "from": ("be", "from"), "located_in": ("be", "in"),
    "likes": ("like", ""), "dislikes": ("dislike", ""), "prefers": ("prefer", ""),
    "speaks": ("speak", ""), "learns": ("learn", ""), "visited": ("visit", ""),
    "met": ("meet", ""), "uses": ("use", ""), "has": ("have", ""), "has_pet": ("have", ""),
    "allergy": ("be", "allergic to"), "born_in": ("be", "born in"),
    "grew_up_in": ("grow", "up in"), "lives_with": ("live", "with"), "shift": ("work", "the"),
    "reply_language": ("want", "replies in"), "answer_style": ("prefer", ""),
    "commute": ("commute", ""), "plays": ("play", ""), "drives": ("drive", ""),
    "sleep_hours": ("sleep", ""),
    "reading_now": ("be", "reading"), "watching_now": ("be", "watching"),
    "work_schedule": ("work", ""), "handedness": ("be", ""),
    "chronotype": ("be", ""), "pet_person": ("be", ""),
}
_NOUN_PHRASE = {"phone": "phone number", "email": "email address", "age": "age",
                "job_title": "job title", "from": "hometown", "birthday": "birthday"}


@dataclass(frozen=True, slots=True)
class _Holder:
    key: str
    name: str
    confidence: float = 0.9


def _not_a_name(name: str) -> bool:
    """"The", "Working", "Yesterday": capitalised at the start of a sentence, not a person."""
    first = name.split()[0].casefold()
    return first in _PRONOUN_LIKE or (first.endswith("ing") and verb_lemma(first) is not None)


def _holder(match: re.Match[str], role: str) -> _Holder | None:
    if match.group("i"):
        return _Holder(USER, "User") if role == "user" else None
    if match.group("we"):
        return _Holder(PROJECT, "The team") if role == "user" else None
    if match.group("you"):
        return _Holder(USER, "User", 0.55) if role == "assistant" else None
    if match.group("pron"):  # no one named before it in the text: the pipeline finds whom
        pronoun = match.group("pron").casefold()
        return _Holder(f"pronoun:{pronoun}", pronoun.capitalize(), 0.8) if role == "user" \
            else None
    if match.group("rel"):
        rel, name = match.group("rel").casefold(), match.group("relname")
        if name:
            return _Holder(f"person:{name.casefold()}", f"User's {rel} {name}")
        return _Holder(f"person:user_{rel.replace(' ', '_')}", f"User's {rel}")
    if match.group("orel"):  # "Ana's brother lives in York": the brother, as Ana's
        owner, rel, name = match.group("owner"), match.group("orel"), match.group("orelname")
        if _not_a_name(owner):
            return None
        if name:
            return _Holder(f"person:{name.casefold()}", f"{owner}'s {rel} {name}")
        return _Holder(f"person:{owner.casefold()}_{rel.replace(' ', '_')}", f"{owner}'s {rel}")
    name = match.group("name")
    if _not_a_name(name):
        return None
    if name.casefold() == "user":  # a third-person restatement: "User lives in Porto"
        return _Holder(USER, "User") if role == "user" else None
    return _Holder(f"person:{name.casefold().replace(' ', '_')}", name)


def _article(value: str) -> str:
    if _ARTICLE.match(value) or not value[:1].islower():
        return value
    return ("an " if value[:1] in "aeiou" else "a ") + value


#: Words that only say a time follows: "due in April" is the time, not "due".
_SAYS_WHEN = frozenset({"due", "scheduled", "planned", "expected", "set", "booked"})
_CHANGE_ADVERB_TAIL = re.compile(r"(?:,?\s+(?:now|anymore|any more|these days|nowadays|"
                                 r"again|already|instead|currently|at the moment))+$", _I)


#: How wholly, said after the value: "gave up coffee completely", "no car at all".
_DEGREE_ADVERB_TAIL = re.compile(r"(?:,?\s+(?:completely|entirely|altogether|totally|at all|"
                                 r"cold turkey|for good))+$", _I)


def _untimed(text: str, *, time_is_value: bool = False) -> str:
    """``text`` without its time phrases; with ``time_is_value``, a time that is all it says
    stays ("the deadline is next week"), while "I work out every morning" has no object."""
    text = _DEGREE_ADVERB_TAIL.sub("", _TRAIL.sub("", text.strip()))
    untimed = _TIME_HEAD.sub("", _TIME_TAIL.sub("", text)).strip()
    if time_is_value and (not re.search(r"[^\W\d_]", untimed)  # "on July 4": not just "4"
                          or untimed.casefold() in _SAYS_WHEN):  # "due in April"
        text = _CHANGE_ADVERB_TAIL.sub("", text)  # "5.9% now": "now" is no part of it
        return re.sub(r"^(?:on|in|at|by)\s+", "", text, flags=_I)
    return untimed


def clean_value(text: str, *, time_is_value: bool = False) -> str:
    """The value without time phrases, trailing punctuation, a leading article or the quotes
    around a title ("'Dune'")."""
    value = _ARTICLE.sub("", _TRAIL.sub("", _untimed(text, time_is_value=time_is_value))).strip()
    quoted = re.fullmatch(r"(['\"“‘])(?P<v>[^'\"“”‘’]+)(['\"”’])", value)
    return quoted["v"] if quoted else value


def _phrase(text: str, *, time_is_value: bool = False) -> str:
    """The complement as it reads in a sentence: time phrases gone, articles kept."""
    return _untimed(text, time_is_value=time_is_value)


def render(holder: str, attribute: str, phrase: str, *, negated: bool = False,
           change: bool = False, past: bool = False, verb: str | None = None) -> str:
    """A standalone third-person sentence: "User no longer works at Acme."."""
    if attribute == "age" and verb is None:
        return _sentence(holder, "be", "", f"{phrase} years old", negated, change, past)
    if attribute.startswith("uses_") and verb is None:
        verb = "use"
    if verb is None and attribute in _VERB_PHRASE:
        lemma, prep = _VERB_PHRASE[attribute]
    elif verb is not None:
        lemma, prep = verb, ""
    else:
        noun = _NOUN_PHRASE.get(attribute, attribute.replace("_", " "))
        owner = holder if holder.casefold() in _PRONOUN_HOLDERS else f"{holder}'s"
        return _sentence(f"{owner} {noun}", "be", "", phrase, negated, change, past)
    if attribute == "job_title":
        phrase = _article(phrase)
    return _sentence(holder, lemma, prep, phrase, negated, change, past)


def _sentence(holder: str, lemma: str, prep: str, phrase: str, negated: bool, change: bool,
              past: bool) -> str:
    base, rest = lemma.split(" ", 1) if " " in lemma else (lemma, "")
    tail = " ".join(p for p in (rest, prep, phrase) if p)
    present = "VBP" if _plural(holder) else "VBZ"  # "Ana's kids love pizza"
    if base == "be":
        verb = inflect("be", ("VBD" if present == "VBZ" else "VBD_PL") if past else present)
        verb += (" no longer" if change else " not") if negated else ""
    elif negated:
        does = "does" if present == "VBZ" else "do"
        verb = f"did not {base}" if past else ("no longer " + inflect(base, present) if change
                                               else f"{does} not {base}")
    else:
        verb = inflect(base, "VBD" if past else present)
    text = f"{holder} {verb} {tail}".strip()
    return text[:1].upper() + text[1:]


_PLURAL_HOLDERS = frozenset("""kids children parents friends sisters brothers colleagues
    cousins neighbors neighbours roommates coworkers grandparents twins sons daughters
    they""".split())


def _plural(holder: str) -> bool:
    """"User's kids", "Ana's parents": a subject that takes "love", not "loves"."""
    return holder.rsplit(" ", 1)[-1].casefold() in _PLURAL_HOLDERS


# -- reading a clause --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Verb:
    lemma: str
    rest: str  # the complement, after the verb
    manner: _Manner


def _aux_run(text: str, manner: _Manner) -> tuple[str, set[str]]:
    """Consume auxiliaries, negation and adverbs; return the rest and the tags they carry."""
    tags: set[str] = set()
    while True:
        match = _AUX_RE.match(text.casefold())
        if match is None:
            return text, tags
        tags.update(_AUX[match.group(0)].split())
        text = text[match.end():].lstrip(" ,")


def read_verb(text: str, manner: _Manner) -> _Verb | None:
    """The main verb (as a lemma), its complement and the tense, negation and change cues."""
    rest, tags = _aux_run(text, manner)
    first, _, tail = rest.partition(" ")
    lemma = verb_lemma(first) if first else None
    if lemma == "be" or (lemma is None and "be" in tags) or not first:
        lemma, tail = "be", rest
    elif "be" in tags and not first.casefold().endswith(("ing", "ed")) and lemma != "get" \
            and _participle(rest) is None:
        lemma, tail = "be", rest  # "I'm single": a state after be, not the verb "to single"
    elif "perf" in tags and (lemma is None or (
            "be" not in tags and not first.casefold().endswith("ing")
            and not _is_participle(first, lemma))):
        lemma, tail = "have", rest  # "my son has braces": "has" is the verb
    elif lemma is None:
        return None
    if "be" in tags and first.casefold().endswith("ing"):
        tags.add("progressive")
    elif lemma in ("be", "get") or "be" in tags:
        participle = _participle(rest if lemma != "get" else tail)
        if participle is not None:
            if lemma == "get":
                tags.update(("change",) if "past" in tags or is_past_form(first, "get")
                            else ())
                tags.discard("past")
            lemma, tail = "be", participle
    past = "past" in tags or (not tags & {"perf", "be", "future"} and lemma != "be"
                              and is_past_form(first, lemma))
    if lemma == "be" and "be" in tags and "past" in tags:
        past = True
    particle, _, after = tail.partition(" ")
    if f"{lemma} {particle.casefold()}" in _PHRASAL:
        lemma, tail = f"{lemma} {particle.casefold()}", after
    return _Verb(lemma, tail.strip(), replace(
        manner, negated=manner.negated or "neg" in tags,
        change=manner.change or "change" in tags,
        hedged=manner.hedged or "hedge" in tags, past=manner.past or past, future="future" in tags,
        habit="habit" in tags, progressive="progressive" in tags))


def _is_participle(word: str, lemma: str) -> bool:
    forms = lemminflect_module().getInflection(lemma, tag="VBN") or ()
    return word.casefold() in forms


def _participle(rest: str) -> str | None:
    """"based in Austin", "married to Sam", "tired": a state after be/get, not a verb."""
    lowered = rest.casefold()
    if any(lowered.startswith(k + " ") for k in _BE_CLASSES if " " in k):
        return rest
    first = lowered.split(" ", 1)[0]
    lemma = verb_lemma(first) if first else None
    if lemma is not None and first.endswith("ed") and is_past_form(first, lemma):
        return rest
    return None


def _prep_split(rest: str, preps: dict[str, str]) -> tuple[str, str] | None:
    """Which of ``preps`` opens ``rest``: (attribute, object)."""
    lowered = rest.casefold()
    for prep in sorted(preps, key=len, reverse=True):
        if not prep:
            continue
        if lowered.startswith(prep + " "):
            return preps[prep], rest[len(prep) + 1:]
    if "" in preps and rest and not re.match(r"^(?:to|in|at|on|for|with|about|of)\s", lowered):
        return preps[""], rest
    return None


_CATEGORY_RES = [
    (category, re.compile(r"(?<![\w+#])(?:" + "|".join(re.escape(n) for n in names)
                          + r")(?![\w+#])"))
    for category, names in _CATEGORIES.items()
]


def _category(value: str) -> str | None:
    """Which family of tools or tastes ``value`` names ("Vim" → editor), if any."""
    lowered = value.casefold()
    return next((c for c, pattern in _CATEGORY_RES if pattern.search(lowered)), None)


@dataclass(frozen=True, slots=True)
class _Claim:
    """An attribute and complement before it becomes a Statement."""

    attribute: str
    phrase: str
    verb: str | None = None  # the generic verb lemma when ``attribute`` is not in a class
    old: str | None = None  # the value replaced ("from X to Y", "Y instead of X")
    tail: str = ""  # said after the value, kept in the sentence ("for CI")


def classify(verb: _Verb) -> _Claim | None:
    """(lemma, preposition, object) → attribute and complement."""
    rest = verb.rest
    from_to = _FROM_TO.match(rest)
    old: str | None = None
    if from_to is not None and verb.lemma in ("move", "switch", "migrate", "relocate",
                                               "change", "go"):
        old, rest = from_to.group("old"), f"{from_to.group('pre') or ''} to {from_to.group('new')}"
        rest = rest.strip()
    instead = (_PREFER_OVER if verb.lemma == "prefer" else _INSTEAD).search(rest)
    if instead is not None:
        old, rest = instead.group("old"), rest[:instead.start()]
    claim = _classified(verb, rest)
    if claim is None:
        return None
    return replace(claim, old=_phrase(old) if old else None)


#: A named tool and what it is used for: "Jenkins for CI", "GitHub Actions for our builds".
_TOOL_FOR = re.compile(r"^(?P<v>(?-i:[A-Z0-9])[\w.+#&-]*(?: (?-i:[A-Z0-9])[\w.+#&-]*)*) for "
                       r"(?:our |my |the )?(?P<purpose>[a-z][a-z-]*(?: [a-z][a-z-]*)?|"
                       r"(?-i:[A-Z]{2,5}))$", _I)
#: Purposes too broad to be one tool's slot ("I use Slack for work", "Zoom for work").
_BROAD_PURPOSES = frozenset({"work", "fun", "school", "everything", "personal", "home",
                             "business", "stuff", "things", "now", "free", "a while"})


def _classified(verb: _Verb, rest: str) -> _Claim | None:
    lemma = verb.lemma
    if lemma == "be":
        return _be_claim(rest)
    if lemma in ("switch", "migrate", "move", "upgrade", "downgrade") and _category(rest):
        split = _prep_split(rest, {"to": "uses", "": "uses"})
        phrase = split[1] if split else rest
        return _Claim(f"uses_{_category(phrase) or 'tool'}", phrase)
    role_of = re.match(r"^(?P<v>.+?)\s+as\s+(?:my|our|the|a|an)\s+(?P<noun>[a-z][\w -]{1,30})$",
                       rest, _I) if lemma == "use" else None
    if role_of is not None:  # "I use Helix as my editor": the editor is Helix
        return _Claim(_used_as(role_of["noun"]), role_of["v"])
    if lemma == "use" and _category(rest):
        return _Claim(f"uses_{_category(rest)}", re.split(r"\s+for\s+", rest)[0])
    tool = _TOOL_FOR.match(rest) if lemma == "use" else None
    if tool is not None and tool["purpose"].casefold() not in _BROAD_PURPOSES:
        return _Claim(f"uses_{slug(tool['purpose'])}", tool["v"],  # "We use Jenkins for CI"
                      tail=rest[len(tool["v"]):].strip())
    if lemma in ("prefer", "love") and _category(rest):
        return _Claim(f"favourite_{_category(rest)}", rest)
    if lemma == "retire" and not re.sub(r"^from\s+.+$", "", _untimed(rest)).strip():
        return _Claim("employment_status", "retired")  # "my uncle retired (from X)"
    if lemma in ("move", "relocate") and _untimed(rest).casefold() in ("there", "here"):
        return _Claim("lives_in", rest)  # "moved there": the place named before it
    state = _state_claim(rest) if lemma in _INTO_STATE or lemma in _IN_STATE else None
    if state is not None:
        return state
    role = _be_claim(_untimed(rest) or rest) if lemma == "become" else None
    if role is not None and role.attribute == "job_title":  # "became a professor"
        return role
    if lemma == "turn" and re.match(r"^\d{1,3}\b", rest):
        return _Claim("age", rest.split()[0])
    allergy = _HAVE_ALLERGY.match(rest) if lemma == "have" else None
    if allergy is not None:  # "a peanut allergy", "an allergy to cats": allergic to them
        return _Claim("allergy", allergy["x"] or allergy["y"])
    if lemma == "have" and _PETS.intersection(content_words(rest)):
        return _Claim("has_pet", re.sub(r"\bcalled\b", "named", rest))  # one wording
    school = _SCHOOL.match(_untimed(rest)) if lemma in _SCHOOL_VERBS else None
    if school is not None:  # "goes to Hillview School", "attends Oakwood Academy"
        return _Claim("school", school["v"])
    moved = _TRANSFERRED.match(_untimed(rest)) if lemma == "transfer" else None
    if moved is not None:  # "Raj transferred to Stanford": his school now
        return _Claim("school", moved["v"])
    slept = _SLEEP.match(_untimed(rest)) if lemma == "sleep" else None
    if slept is not None:  # "I sleep about 6 hours a night"
        return _Claim("sleep_hours", f"{slept['n']} hours")
    commute = _commute(lemma, _untimed(rest))
    if commute is not None:  # "I bike to work", "I take the train to work", "commute by bus"
        return _Claim("commute", commute)
    if lemma == "live" and _ALONE.match(_untimed(rest)):  # "my aunt lives alone"
        return _Claim("lives_with", "no one")
    if lemma in ("prefer", "like", "want", "love") and _ANSWER_STYLE.match(_untimed(rest)):
        return _Claim("answer_style", _untimed(rest))  # "I prefer short, concise answers"
    plan = _PLAN.match(_untimed(rest)) if lemma in _PLAN_VERBS else None
    if plan is not None:  # "downgraded to the Basic plan", "switched to the annual plan"
        return _Claim("plan", plan["v"])
    shift = _SHIFT.match(_untimed(rest)) if lemma in _SHIFT_VERBS else None
    if shift is not None:  # "I work the night shift", "got moved to days"
        return _Claim("shift", f"{shift['v'].casefold()} shift{shift['at'] or ''}")
    grade = _GRADE.match(_untimed(rest)) if lemma in _SCHOOL_VERBS else None
    if grade is not None:  # "started fourth grade", "is going into second grade"
        return _Claim("school_grade", grade["v"])
    classes = _VERB_CLASSES.get(lemma, {})
    if "" in classes and not _phrase(rest):  # "my grandpa doesn't drive anymore"
        return _Claim("does", lemma, verb=lemma)
    if _PREFERENCE.intersection(classes.values()):  # "like to go hiking": likes hiking
        rest = _GOING.sub("", rest)
    split = _prep_split(rest, classes)
    if split is not None:
        attribute, phrase = split
        if attribute in _PREFERENCE or attribute == "speaks":
            phrase = _DEGREE_TAIL.sub("", _GOING.sub("", phrase))
        if attribute == "speaks":  # "fluent German" is German, so is "German fluently"
            phrase = _PROFICIENCY_TAIL.sub("", _PROFICIENCY.sub("", phrase))
        if attribute in ("lives_in", "works_at") and lemma in ("move", "relocate", "join") \
                and not clean_value(phrase)[:1].isupper() \
                and not unknown_word(clean_value(phrase).split(" ", 1)[0]) \
                and clean_value(phrase).casefold() not in ("there", "here") \
                and not (attribute == "lives_in" and _IN_PLACE.search(phrase)):
            return _Claim(inflect(lemma, "VBZ"), rest, verb=lemma)
        if attribute == "lives_in" and re.match(r"^\d+[a-z]?\s+\w", clean_value(phrase)):
            return _Claim("address", phrase)  # "live at 14 birchwood lane": an address
        return _Claim(attribute, phrase)
    if not _phrase(rest):
        return _Claim("does", lemma, verb=lemma)
    rest = re.sub(r"^(?:his|her|their)\s+(?=\w)", "", rest, flags=_I)  # "sucks her thumb"
    return _Claim(inflect(lemma, "VBZ").replace(" ", "_"), rest, verb=lemma)


#: How one gets to work or school: "commute by train", "bike to work", "take the bus to school".
_COMMUTE_BY = re.compile(r"^(?:by|on|via) (?:the |a |my )?(?P<v>[a-z]+)$", _I)
_TO_WORK = r"(?:to|into) (?:work|the office|school|class|campus|uni|university|college)"
_COMMUTE_ON = re.compile(rf"^(?:the |a |my )?(?P<v>bus|train|subway|tube|metro|tram|ferry|"
                         rf"bike|car|uber|taxi|cab|scooter)(?: \w+)? {_TO_WORK}\b", _I)
_COMMUTE_GO = re.compile(rf"^{_TO_WORK} (?:by|on) (?:the |a |my )?(?P<v>[a-z]+)$", _I)
_COMMUTE_SELF = {"walk": "on foot", "bike": "by bike", "cycle": "by bike", "drive": "by car",
                 "run": "running", "skate": "by skateboard", "scooter": "by scooter"}
_ALONE = re.compile(r"^(?:alone|by (?:my|him|her|them)sel(?:f|ves)|on (?:my|his|her|their) "
                    r"own)$", _I)


def _commute(lemma: str, rest: str) -> str | None:
    """How one commutes, from "commute by X", "<walk|bike|drive> to work", "take the X to
    work" or "go to work by X" (None: no commute said)."""
    if lemma == "commute":
        by = _COMMUTE_BY.match(rest)
        return f"by {by['v'].casefold()}" if by else None
    if lemma in _COMMUTE_SELF and re.match(rf"^{_TO_WORK}\b", rest, _I):
        return _COMMUTE_SELF[lemma]
    if lemma == "work" and re.match(r"^(?:from home|remotely|remote)$", rest, _I):
        return "from home"
    if lemma in ("take", "ride", "catch", "get"):
        on = _COMMUTE_ON.match(rest)
        return f"by {on['v'].casefold()}" if on else None
    if lemma in ("go", "get"):
        by = _COMMUTE_GO.match(rest)
        return f"by {by['v'].casefold()}" if by else None
    return None


_PLAN_VERBS = frozenset({"upgrade", "downgrade", "switch", "move", "change", "go", "sign up"})
_SHIFT_VERBS = frozenset({"work", "get", "move", "switch", "start", "go", "pull", "do"})
_SCHOOL_VERBS = frozenset({"go", "attend", "start", "switch", "transfer", "enter", "finish"})
#: "transferred to Stanford": a school named alone (not "the Boston office").
_TRANSFERRED = re.compile(r"^to (?P<v>(?-i:[A-Z][\w&.'-]*)(?: (?-i:[A-Z][\w&.'-]*)){0,3})$", _I)
#: A year of school: "(in) third grade", "grade 4", "(her) sophomore year", "kindergarten".
_GRADE = re.compile(r"^(?:in |into |to )?(?:the |his |her |their |my |a |an )?"
                    r"(?P<v>(?:(?:\d{1,2}(?:st|nd|"
                    r"rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
                    r"eleventh|twelfth) grade|(?:grade|year) \d{1,2}|kindergarten|preschool|"
                    r"(?:freshman|sophomore|junior|senior)(?: year)?))(?: (?:of|in|at) .+)?$",
                    _I)
#: Where someone studies: "(to) Hillview School", "(at) the University of Porto".
_SCHOOL = re.compile(r"^(?:to |at )?(?P<v>(?:the )?(?:[A-Z][\w.'-]*\s+){0,4}(?:School|Academy|"
                     r"University|College|Kindergarten|Preschool|Institute|Gymnasium|Lyceum|"
                     r"Polytechnic|Elementary|Primary|High|Middle|Montessori)"
                     r"(?:\s+(?:School|of(?:\s+[A-Z][\w.'-]*){1,4}))?)$")
_HAVE_ALLERGY = re.compile(r"^(?:an?\s+|severe\s+|bad\s+)*(?:(?P<x>[\w -]+?)\s+allergy|"
                           r"allergy\s+to\s+(?P<y>.+))$", _I)
#: "love going hiking", "like to go swimming": the activity itself.
_DEGREE_TAIL = re.compile(r"\s+(?:a lot|a ton|so much|very much|quite a bit|a great deal|"
                          r"too|fluently|natively|well|a little|a bit|poorly|badly|perfectly|"
                          r"decently)$", _I)
#: "I was moved to the night shift": the shift holds now.
_PUT_ON_SHIFT = re.compile(r"\b(?:was|were|have been|'ve been|has been|'s been) (?:moved|switched|"
                           r"put|transferred) (?:to|onto)(?= (?:the )?\w+ shifts?\b| (?:days|"
                           r"nights)\b)", _I)
#: Which shift one works: "the night shift", "got moved to days".
_SHIFT = re.compile(r"^(?:(?:got |been |was )?(?:moved|switched|put|transferred) )?"
                    r"(?:on |to |onto )?(?:the )?(?P<v>night|day|evening|morning|graveyard|"
                    r"early|late|swing|weekend|overnight|afternoon)(?: shifts?|s)"
                    r"(?P<at> (?:at|for) (?-i:[A-Z]).+)?(?: (?:at|in|for) .+)?$", _I)
_GOING = re.compile(r"^(?:going|to go)\s+(?=\w+ing\b)", _I)


def _used_as(noun: str) -> str:
    """The attribute "X as my <noun>" sets: the tool family when the noun names one."""
    noun = noun.casefold().strip()
    return f"uses_{noun}" if noun in _CATEGORIES else noun_attribute(noun)


#: States one holder is in one of at a time: "I'm single" then "I'm married now".
_STATE_FAMILIES = {
    "relationship_status": frozenset({"single", "married", "engaged", "divorced", "widowed",
                                      "separated", "in a relationship"}),
    "diet": frozenset({"vegetarian", "vegan", "pescatarian", "pescetarian", "keto",
                       "omnivore", "carnivore", "flexitarian"}),
    "employment_status": frozenset({"retired", "unemployed", "jobless", "self-employed",
                                    "between jobs", "on sabbatical", "on leave",
                                    "on maternity leave", "on paternity leave",
                                    "on parental leave", "on sick leave", "on medical leave",
                                    "back at work", "working"}),
    "handedness": frozenset({"left-handed", "right-handed", "ambidextrous"}),
    "chronotype": frozenset({"morning person", "night owl", "early bird", "night person",
                             "early riser", "evening person", "late riser"}),
    "pet_person": frozenset({"cat person", "dog person"}),
}
#: States said with an article: "User is a night owl", "User is an early bird".
_COUNTED_STATES = frozenset({"chronotype", "pet_person"})


def _state_claim(rest: str) -> _Claim | None:
    """One of the states of ``_STATE_FAMILIES`` ("married", "vegan now"), or None."""
    state = re.sub(r"^(?:on\s+)?(?:a|an|now|still|fully|completely|totally|strictly|full)\s+|"
                   r"\s+(?:now|again|these days|any ?more)$",
                   "", _TIME_TAIL.sub("", rest.casefold()))  # "married in June": since June
    state = re.sub(r"^(?:on\s+)?(?:a|an|the)\s+|\s+diet$", "", state)  # "on a keto diet"
    if state.startswith("on ") and not any(state in states for states in
                                           _STATE_FAMILIES.values()):
        state = state.removeprefix("on ")  # "on keto" (but "on sabbatical" is said so)
    for family, states in _STATE_FAMILIES.items():
        if state in states and family in _COUNTED_STATES:
            return _Claim(family, f"{'an' if state[0] in 'aeiou' else 'a'} {state}")
        if state in states:
            return _Claim(family, state)
    return None


#: How well one speaks a language, said before it.
#: How well, said after the language: "portuguese fluently".
_PROFICIENCY_TAIL = re.compile(r"\s+(?:fluently|natively|well|a little|a bit|okay|ok|"
                               r"conversationally|badly|poorly)$", _I)
_PROFICIENCY = re.compile(r"^(?:fluent|native|basic|conversational|decent|some|a little|a bit of|"
                          r"broken|passable|rusty|good|okay|ok)\s+", _I)
#: Verbs that put their holder into a state: "went vegan", "became engaged", "got divorced".
_INTO_STATE = frozenset({"go", "become", "turn", "get", "retire"})
#: Verbs that say the holder keeps to one: "I follow a keto diet", "I'm not doing keto".
_IN_STATE = frozenset({"follow", "do", "eat", "try"})


#: Units a weight is said in (a person's also in stone).
_WEIGHT_UNITS = "pounds|lbs?|kg|kilos|kilograms"
#: A body measure said after "be": how tall, how heavy.
_MEASURES = {
    "height": re.compile(r"^(?:about |around |almost |nearly )?(?P<v>\d'\s?\d{1,2}(?:\"|'')?|"
                         r"\d(?:\.\d\d?)?\s?m|1\d\d\s?cm|\d (?:feet|foot|ft)(?: \d{1,2}"
                         r"(?: inches| in)?)?)(?: tall)?$", _I),
    "weight": re.compile(r"^(?:down to |up to |about |around |roughly )*(?P<v>\d{2,3}(?:\.\d)?"
                         rf"\s?(?:{_WEIGHT_UNITS}|stone))$", _I),
}


#: What one is assigned to, said after "be": "on the Gemini project", "on the payments team".
_ON_THE_PROJECT = re.compile(r"^on (?:the )?(?P<v>[\w' -]{1,30}? (?:project|team|account|squad|"
                             r"case|initiative|launch))$", _I)
#: A time zone said after "be": "on Central time", "in the Pacific time zone", "on CET".
_TIME_ZONE = re.compile(r"^(?:on|in) (?:the )?(?P<v>pacific|eastern|central|mountain|atlantic|"
                        r"alaska|hawaii|(?-i:[A-Z]{2,4}))(?: standard)? time(?: zone)?$", _I)
#: Which plan or tier of a service: "on the Pro plan", "downgraded to the Basic plan".
_PLAN = re.compile(r"^(?:on |to |onto )(?:the |a |an )?(?P<v>[\w' +-]{1,30}? (?:plan|tier|"
                   r"subscription|package|membership))$", _I)


def _be_claim(rest: str) -> _Claim | None:
    lowered = rest.casefold()
    years = re.match(r"^(\d{1,3})(?: years? old)?$", _untimed(lowered) or lowered)
    if years:
        return _Claim("age", years.group(1))
    state = _state_claim(rest)
    if state is not None:
        return state
    grade = _GRADE.match(_untimed(rest) or rest)
    if grade is not None:
        return _Claim("school_grade", grade["v"])
    shift = _SHIFT.match(_untimed(rest) or rest)
    if shift is not None:  # "I'm on the night shift", "I got moved to days"
        return _Claim("shift", f"{shift['v'].casefold()} shift{shift['at'] or ''}")
    plan = _PLAN.match(_untimed(rest) or rest)
    if plan is not None:
        return _Claim("plan", plan["v"])
    assigned = _ON_THE_PROJECT.match(_untimed(rest) or rest)
    if assigned is not None:  # "I'm on the Gemini project now"
        return _Claim("works_on", assigned["v"])
    zone = _TIME_ZONE.match(_untimed(rest) or rest)
    if zone is not None:  # "I'm on Central time now", "I'm in the Pacific time zone"
        return _Claim("timezone", f"{zone['v']} time")
    for attribute, measure in _MEASURES.items():
        measured = measure.match(_untimed(rest) or rest)
        if measured is not None:  # "I'm 5'8\"", "I'm down to 165 pounds"
            return _Claim(attribute, measured["v"])
    split = _prep_split(rest, _BE_CLASSES)
    if split is not None:
        return _Claim(*split)
    role = re.match(r"^(?:(?:a|an)\s+)?(?P<role>.+?)(?:\s+(?:at|for|in)\s+(?P<org>.+))?$", rest,
                    _I)
    if role and content_words(role.group("role")) and \
            content_words(role.group("role"))[-1] in _ROLE_NOUNS and \
            re.match(r"^(?:a|an)\s", lowered):
        return _Claim("job_title", rest)
    if not content_words(rest):
        return None
    return _Claim("is", rest, verb="be")


# -- sentence patterns that name an attribute ------------------------------------------------
_MY_ATTRIBUTE = re.compile(
    rf"^(?:(?P<det>my|our|the|his|her|their)|(?-i:(?P<owner>{_NAME}(?: {_NAME})?))'s) "
    r"(?:(?P<new>new|current|updated) )?(?P<noun>[a-z][\w' -]{1,40}?)"
    r"(?: for (?P<of>[\w' -]{1,40}?))? (?:(?:was|has been|have been|got|is|are|will be) "
    r"(?:raised|increased|"
    r"moved|pushed|changed|handed over|handed|given|reassigned|bumped|lowered|cut|reduced|"
    r"updated|set|postponed|delayed|extended|rescheduled|shifted)(?: back| out| over| up|"
    r" forward)? (?:to|on)|has changed to|"
    r"changed to|"
    r"(?:has |have )?(?:changed|switched|passed|gone|went) from (?P<old>.+?) to|"
    r"(?:went|has gone|is going|will go|goes) (?:up|down) to|(?:has |have )?(?:rose|risen|"
    r"increased|dropped|fell|fallen|decreased|jumped|climbed|grew|grown|doubled|shrank|"
    r"shrunk) to|(?P<bare>(?:has |have )?(?:moved|changed|shifted|slipped|switched)"
    r"(?: back| over)? to)|"
    r"(?:is|was|has been|got) (?:re)?(?:scheduled|set|planned|booked|slated) (?:for|on)|"
    r"(?P<timed>starts|begins|ends|finishes|opens|closes) (?:at|on)|"
    r"is now|is|are|was|will be)(?: now)?(?: called| named)? (?P<v>.+)$", _I)
_IS_MY = re.compile(rf"^(?P<v>(?:(?:Dr|Mr|Mrs|Ms|Prof)\.? )?{_NAME}(?: {_NAME})?) "
                    r"is(?P<neg>n't| not| no longer)? (?:now )?"
                    rf"(?:(?P<det>my|our|the)|"
                    rf"(?P<owner>{_NAME}(?: {_NAME})?)'s) "
                    r"(?:(?P<new>new) )?(?P<noun>[A-Za-z][\w -]{1,30}?)(?: now)?$")
#: "Project Atlas is owned by Ravi", "the lead role was handed over from Marta to Ivo": who
#: holds a thing (or a role) now; handing it over is a change.
_HELD_BY = re.compile(
    r"^(?P<thing>[\w' -]{2,60}?) (?:is|are|was|were|has been|have been|got|gets|will be|"
    r"is being)(?: now| just)? (?:(?:owned|led|run|managed|headed|handled|maintained|"
    r"coordinated|chaired|taken over) by|(?P<handed>handed|passed|transferred|reassigned|"
    r"given)(?: over| on)?(?: from (?P<old>.+?))? to)(?: now)? (?P<v>.+)$", _I)
#: "Sam took over the Atlas project from Ravi": Sam holds it now.
_TOOK_OVER = re.compile(rf"^(?P<v>{_NAME}(?: {_NAME})?) (?:took over|has taken over|"
                        r"is taking over|will take over|inherited|now owns|now leads|"
                        r"now runs) (?P<thing>(?:the |our )?[\w' -]{2,60}?)"
                        r"(?: from (?P<old>.+))?$")
#: What a role's name may end with that is not part of the role ("the lead role").
_ROLE_TAIL = re.compile(r"\s+(?:role|position|job|seat|duties|responsibilities)$", _I)
#: A date or time: what "the deadline moved to ..." (no "was") may move to.
_WHEN = re.compile(r"^(?:on |at |until )?(?:\d|(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
                   r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|"
                   r"next\b|tomorrow|today|tonight|noon|midnight|the (?:\d|end|start|"
                   r"beginning|middle|first|last|next|following)\b)", _I)
_ACTIVE_SET = re.compile(r"^(?:(?P<det>my|our|the|his|her|their) )?(?P<noun>[a-z][\w' -]{1,40}?)"
                         r"(?: over| back| forward| out)? (?:to|on) (?P<v>.+)$", _I)
_SET_VERBS = frozenset({"change", "move", "push", "raise", "hand over", "hand", "reassign",
                        "rename",
                        "update", "set", "bump", "give", "postpone", "delay", "increase"})
#: "New number: 555-0199", "email - jo@x.org": a labelled value of a known attribute.
_LABELLED = re.compile(r"^(?:(?P<det>my) )?(?:(?P<new>new|updated|current|correct) )?"
                       r"(?P<noun>[a-z][\w -]{1,30}?)(?:\s+(?:btw|fyi|tho|though|too))?"
                       r"(?:\s+for (?:shipping|deliver(?:y|ies)|billing|mail|packages|the forms?|"
                       r"forms?|reference|the records?))?"
                       r"\s*(?:(?<!\d):|:(?!\d)|\s-)\s*(?P<v>\S(?:(?!\s[—–]\s).)*)"
                       r"(?:\s[—–]\s.*)?$", _I)  # not the colon of "5:30"
#: "I have a new boss, Ruth", "Lena got a new dentist: Dr. Wu": the new value of a slot.
_HAS_NEW = re.compile(rf"^(?:(?P<i>i)|my (?P<rel>{'|'.join(_RELATIVES)})|"
                      rf"(?-i:(?P<owner>{_NAME}(?: {_NAME})?))) (?:(?:just |finally )?(?:have|"
                      r"has|got|have got|'ve got|found|have found|picked|chose|see|sees|"
                      r"am seeing|is seeing|go to|goes to|am going to|is going to|"
                      r"(?:have |has )?switched to|bought|purchased|adopted|started seeing|"
                      r"started going to|hired|have started going to|has started going to|"
                      r"have started seeing|has started seeing)) (?:a )?(?:new|different|another) "
                      r"(?P<noun>[a-z][\w -]{1,30}?)(?: now)?(?:\s*[,:—–]|\s+-|\s+called|"
                      r"\s+named)\s+(?:(?:a|an|the)\s+)?(?P<v>(?:[a-z-]+ ){0,2}[A-Z0-9+].*)$", _I)
def _labelled_value(value: str) -> str:
    """A labelled value without a remark after a comma ("progressive, policy renews in
    march"); a place's second part stays ("Springfield, Illinois")."""
    head, comma, rest = value.partition(", ")
    return head if comma and len(head.split()) <= 6 and len(rest.split()) >= 3 else value


def _names_a_thing(value: str) -> bool:
    """A value that names something ("Ruth", "Pixel 9", typed "pixel 9" or "greystar"), not a
    remark ("she's great"): a capital or a digit, or a word the lexicon does not know."""
    first = value.split()[0] if value.split() else ""
    return value[:1].isupper() or any(c.isdigit() for c in value.split(",")[0]) \
        or unknown_word(first.strip(".,!"))


_CALL_ME = re.compile(r"^(?:call me|i go by|i'm called|people call me) (?P<v>.+)$", _I)
#: Pronouns one goes by: "they/them", "she/her", "he/they".
_PRONOUN_SET = re.compile(r"(?:he|she|they|ze|xe|it)/(?:him|her|them|they|she|he|hir|zir|"
                          r"xem|its)(?:/\w+)?", _I)
#: "I started a new job at KPMG", "Ana got a job with Siemens": where they work now.
_NEW_JOB = re.compile(r"\b(?:started|got|landed|took|accepted|found)\s+(?:a\s+|an\s+)?"
                      r"(?:new\s+)?(?:(?:job|position|role)(?:\s+offer)?|offer)\s+"
                      r"(?:at|with|from)\s+", _I)
_PROMOTED = re.compile(r"\b(?:was|have been|'ve been|has been|'s been|got)\s+promoted\s+to\b", _I)
#: "I got a new phone number: 555-0199": the label after the lead-in.
_GOT_NEW = re.compile(r"^i(?:'ve)?\s+(?:got|have|get)\s+(?:a\s+|my\s+)?(?=(?:new|updated)\s)", _I)


#: Role abbreviations said for the role itself.
_ABBREVIATED = {"pm": "product manager", "em": "engineering manager", "po": "product owner",
                "tl": "team lead", "sm": "scrum master", "pa": "personal assistant",
                "gp": "doctor", "pcp": "doctor"}


def noun_attribute(noun: str, of: str | None = None) -> str:
    """"phone number" → phone, "favorite color" → favourite_colour, "launch deadline" →
    deadline_of_launch."""
    noun = re.sub(r"\bfavorite\b", "favourite", noun.casefold().strip())
    noun = re.sub(r"^(?:primary|main|regular|usual|family|current|personal|go-to|preferred|"
                  r"home(?= office| gym| studio| phone)) (?=\w)", "", noun)
    noun = re.sub(r"(?<=\w) (?:upstairs|downstairs|over|back|out|away)$", "", noun)
    noun = re.sub(r"^(?!(?:team|staff|board|client|company|family) )(\w[\w-]*) meeting$", r"\1",
                  noun)  # "the kickoff meeting" is "the kickoff"
    noun = re.sub(r"\bcolor\b", "colour", noun)
    noun = _ABBREVIATED.get(noun, noun)  # "our PM" is "our product manager"
    if noun in _CATEGORIES and noun != "phone" and not of:  # "my phone": its number
        return f"uses_{noun}"  # "my editor is Vim" and "I use Vim": one slot
    if noun in _ATTRIBUTE_NOUNS and not of:
        return _ATTRIBUTE_NOUNS[noun]
    noun = re.sub(r"(?<=\w) number$", "", noun)  # "my locker number" is "my locker"
    if "deadline" in noun or "due date" in noun:
        owner = of or re.sub(r"\s*(?:deadline|due date)\s*", " ", noun).strip()
        owner = re.sub(r"^(?:the|our|my)?\s*(?:project|team|work)$", "", owner)  # just "the"
        return f"deadline_of_{slug(owner)}" if content_words(owner) else "deadline"
    noun = re.sub(r"(?<=\w) date$", "", noun)  # "the wedding date" is when "the wedding" is
    if noun.startswith("favourite "):
        kind = re.sub(r"\btv (?:show|series)\b|\bseries\b", "show",  # "TV show" is "show"
                      noun.removeprefix("favourite "))
        return "favourite_" + slug(kind)
    if not of and noun.split()[-1] in _PETS:  # "my golden retriever", "my tabby cat"
        return "has_pet"
    return slug(f"{noun} {of}" if of else noun, limit=4)


#: Holders a possessive pronoun stands for until the pipeline finds whom it means among
#: the memories ("his school is …" after "my son's school is …": ``domain/pronouns.py``).
_PRONOUN_HOLDERS = {"his": "pronoun:he", "her": "pronoun:she", "their": "pronoun:they"}


#: What "our" and "the" say of the user's own home and family, not of a team.
_HOME_NOUNS = frozenset({"anniversary", "wedding", "wedding date", "internet provider", "wifi",
                         "wifi network", "wifi password", "landlord", "rent", "mortgage",
                         "address", "home address", "house", "apartment", "car insurance",
                         "insurance", "home insurance", "electricity provider", "babysitter",
                         "nanny", "pediatrician", "family doctor", "vet"})


#: What the last word of "our X" names when X is the household's: "our wedding
#: anniversary", "our HOA fee", "the home wifi password", "our family dentist".
_HOME_HEADS = frozenset({"anniversary", "wifi", "password", "landlord", "rent", "mortgage",
                         "address", "insurance", "provider", "babysitter", "nanny",
                         "pediatrician", "vet", "dentist", "fee", "bill", "plumber", "router",
                         "cleaner", "housekeeper", "electrician", "doctor"})


def _of_the_home(noun: str) -> bool:
    noun = noun.casefold()
    return noun in _HOME_NOUNS or noun.rsplit(" ", 1)[-1] in _HOME_HEADS


#: People of one's household ("our neighbor", "the landlord"): the speaker's, as "my" says.
_HOUSEHOLD_PEOPLE = frozenset("""neighbor neighbour neighbors neighbours landlord landlady
nanny babysitter vet dentist pediatrician doctor plumber cleaner housekeeper gardener
roommate housemate""".split())


def _speakers(det: str, noun: str) -> bool:
    """``det`` ``noun`` names the speaker's own: "my X", "our neighbor", "the landlord"
    (the noun's first word: "neighbor's name")."""
    det, words = det.casefold(), noun.casefold().split()
    person = bool(words) and words[0].split("'")[0] in _HOUSEHOLD_PEOPLE \
        and (len(words) == 1 or "'" in words[0])  # not "the dentist appointment"
    return det == "my" or (det in ("our", "the") and person)


def _det_holder(det: str, noun: str, role: str) -> _Holder | None:
    det = det.casefold()
    if _speakers(det, noun) or (det in ("our", "the") and _of_the_home(noun)
                                and role == "user"):  # "our anniversary", "the wifi password"
        return _Holder(USER, "User") if role == "user" else None
    if det in _PRONOUN_HOLDERS:
        return _Holder(_PRONOUN_HOLDERS[det], det.capitalize(), 0.8)
    # "the budget", "the project lead", "the team offsite", "the billing service": the
    # team's (a topic of its own only has an owner: ``_held_by``)
    return _Holder(PROJECT, "The team")


def _is_role(noun: str) -> bool:
    """"project lead", "new CTO": a noun phrase naming a role one person holds."""
    words = noun.casefold().split()
    return bool(words) and words[-1] in _ROLE_NOUNS


def _held_by(clause: str, manner: _Manner, role: str) -> list[Statement] | None:
    """"Project Atlas is owned by Ravi" → Project Atlas's owner is Ravi; "the project lead
    role was handed over from Marta to Ivo" → the project lead is Ivo now (a change)."""
    match = _HELD_BY.match(clause) or _TOOK_OVER.match(clause)
    if match is None or _pronoun_value(match["v"]) or (
            match.re is _TOOK_OVER and _not_a_name(match["v"])):
        return None
    thing = _ROLE_TAIL.sub("", match["thing"].strip())
    det = re.match(r"^(the|our|my|this) ", thing, _I)
    noun = thing[det.end():] if det else thing
    if noun.split()[0].casefold() in _PRONOUN_LIKE | {"i", "you", "we", "he", "she"}:
        return None  # "I was given to understand ...", "it was passed to me"
    handed = match.re is _TOOK_OVER or bool(match["handed"])
    said = replace(manner, change=manner.change or handed)
    if _is_role(noun):
        return _noun_sentence(f"the {noun} is {match['v']}", said, role)
    key = f"topic:{slug(noun, limit=4)}"
    if det is None:
        holder = _Holder(key, noun[:1].upper() + noun[1:])
    elif det[1].casefold() == "my":  # "my laptop was given to my brother"
        if role != "user":
            return []
        holder = _Holder(f"topic:user_{slug(noun, limit=4)}", f"User's {noun}")
    else:
        holder = _Holder(key, _phrase(f"the {noun}"))
    value = re.sub(r"\bmy\b", "User's", match["v"], flags=_I)  # "to my brother"
    return [_attribute_statement(holder, "owner", value, said)]


_OBJECT_PRONOUNS = frozenset("me us you him her them it myself someone somebody everyone".split())


def _pronoun_value(value: str) -> bool:
    """"... was handed over to me": who "me" is, a sentence cannot say."""
    return value.split()[0].casefold() in _OBJECT_PRONOUNS


def _attribute_statement(holder: _Holder, attribute: str, value: str, manner: _Manner,
                         noun: str | None = None) -> Statement:
    phrase = _phrase(value, time_is_value=True)
    if holder.key.startswith("topic:") and attribute != "owner":
        content = render(holder.name, attribute, phrase, negated=manner.negated,
                         change=manner.change)
    elif noun and attribute not in _VERB_PHRASE and holder.key == PROJECT:
        content = _sentence(_phrase(f"The {noun}"), "be", "", phrase, manner.negated,
                            manner.change, manner.past)
    else:
        content = render(holder.name, attribute, phrase, negated=manner.negated,
                         change=manner.change, past=manner.past)
    return replace(_statement(holder, attribute, phrase, content, manner, verb=None,
                              time_is_value=True),
                   single=not attribute.startswith("former_"))


def _pet_statement(holder: _Holder, kind: str, name: str, manner: _Manner) -> Statement:
    """"has a dog named Rex", keyed by the pet (several pets are several claims), however
    the pet was named ("my dog is Rex", "my dog's name is Rex")."""
    said = _attribute_statement(holder, "has_pet", f"a {kind} named {name}", manner)
    return replace(said, single=None)


def _noun_sentence(clause: str, manner: _Manner, role: str) -> list[Statement] | None:
    """"My phone number is ...", "Bob is my manager", "the deadline was moved to Friday"."""
    match = _CALL_ME.match(clause)
    if match:
        holder = _Holder(USER, "User") if role == "user" else None
        said = _untimed(match["v"]) or match["v"]
        what = "pronouns" if _PRONOUN_SET.fullmatch(said) else "name"  # "I go by they/them"
        return [] if holder is None else [_attribute_statement(holder, what, said, manner)]
    labelled = _LABELLED.match(_GOT_NEW.sub("", clause)) or _LABELLED.match(
        clause.rpartition(", ")[2])  # "New phone, new number: 415-555-0199"
    if labelled is not None and role == "user" and (
            labelled["noun"].casefold() in _ATTRIBUTE_NOUNS
            or _BARE_SLOT.match(f"{labelled['noun']} is _") is not None):  # "home wifi pw: x"
        said = replace(manner, change=manner.change or bool(labelled["new"]))
        return [_attribute_statement(_Holder(USER, "User"), noun_attribute(labelled["noun"]),
                                     _labelled_value(labelled["v"]), said)]
    has_new = _HAS_NEW.match(clause)
    if has_new is not None and _names_a_thing(has_new["v"]) \
            and noun_attribute(has_new["noun"]) != "has_pet":  # a new pet joins the others
        return _new_value(has_new, manner, role)
    held = _held_by(clause, manner, role)
    if held is not None:
        return held
    match = _MY_ATTRIBUTE.match(clause) or _IS_MY.match(clause)
    if match is None or (match.re is _IS_MY and _not_a_name(match["v"])):
        return None  # "This is my car", "It is my birthday": no value named
    if match.re is _IS_MY and match["det"] and match["det"].casefold() == "the" \
            and not _is_role(match["noun"]):
        return None  # "Marta is the best": no role named
    if match.groupdict().get("neg"):  # "Tom isn't my manager anymore": retracted
        manner = replace(manner, negated=True, change=True)
    noun = match["noun"].strip()
    untimed = _TIME_TAIL.sub("", noun).strip()
    if untimed and untimed != noun:  # "Greg's favourite band these days is Blur"
        manner = replace(manner, change=manner.change or _CHANGE_TAIL.search(noun) is not None)
        noun = untimed
    if match.groupdict().get("bare") and _WHEN.match(match["v"]) is None:
        return None  # "my brother moved to York", "the office moved to Berlin": a move
    owner = match.groupdict().get("owner")
    if owner is not None:
        return _owned_attribute(match, owner, noun, manner, role)
    pet = re.match(r"^(?P<pet>[a-z]+)'s name$", noun)
    if pet is not None and pet["pet"] in _PETS and match["det"] and \
            match["det"].casefold() == "my" and role == "user":  # "my dog's name is Rocky"
        return [_pet_statement(_Holder(USER, "User"), pet["pet"], match["v"], manner)]
    named = _KIN_NAMED_OWNS.match(noun)
    if named is not None and match["det"].casefold() in ("my", "our") and role == "user" \
            and (named["name"][:1].isupper() or unknown_word(named["name"])) \
            and not _not_a_name(named["name"]):  # "my coworker dana's bday is april 9"
        name = named["name"][:1].upper() + named["name"][1:]
        holder = _Holder(f"person:{name.casefold()}", name)
        return _set_attribute(match, holder, named["noun"], match.string, manner)
    kin = re.match(rf"^({'|'.join(_RELATIVES)})'s (.+)$", noun)
    if kin is not None and _speakers(match["det"], noun) and role == "user" \
            and kin[2] in ("name", "first name"):
        return [_attribute_statement(_Holder(USER, "User"), noun_attribute(kin[1]),
                                     match["v"], manner)]
    if kin is not None and match["det"].casefold() == "my" and role == "user":
        holder = _Holder(f"person:user_{kin[1].replace(' ', '_')}", f"User's {kin[1]}")
        return [_attribute_statement(holder, noun_attribute(kin[2]), match["v"], manner)]
    if match["det"].casefold() == "my" and noun in _RELATIVES and \
            _ATTRIBUTE_NOUNS.get(noun) is None and match.re is _MY_ATTRIBUTE \
            and not match["v"][:1].isupper():
        return None  # "my sister is a nurse": a statement about the sister
    if match.re is _MY_ATTRIBUTE and noun in _RELATIVES and _ARTICLE.match(match["v"]):
        return None  # "my manager is a nice guy"
    if match.re is _MY_ATTRIBUTE and _RELATIVE_NAMED.match(noun):
        return None  # "my daughter Mia is 7": a statement about Mia
    holder = _det_holder(match["det"], noun, role)
    if holder is None:
        return []
    return _set_attribute(match, holder, noun, clause, manner)


def _new_value(match: re.Match[str], manner: _Manner, role: str) -> list[Statement]:
    """"I have a new boss, Ruth": Ruth is the boss now (a change of the slot)."""
    if match["i"]:
        if role != "user":
            return []
        holder = _Holder(USER, "User")
    elif match["rel"]:  # "my son has a new teacher, Mr. Ruiz"
        if role != "user":
            return []
        holder = _Holder(f"person:user_{match['rel'].replace(' ', '_')}",
                         f"User's {match['rel']}")
    elif _not_a_name(match["owner"]):
        return []
    else:
        holder = _Holder(f"person:{match['owner'].casefold().replace(' ', '_')}",
                         match["owner"])
    noun = match["noun"].strip()
    return [_attribute_statement(holder, noun_attribute(noun), match["v"],
                                 replace(manner, change=True), noun)]


#: "coworker dana's birthday", "friend Dana's phone": a thing of a person named after whom
#: they are to the speaker.
_KIN_NAMED_OWNS = re.compile(rf"^(?:{'|'.join(_RELATIVES)}) (?P<name>[a-zA-Z][a-z'-]+)'s "
                             r"(?P<noun>[a-z][\w' -]*)$", _I)


def _owned_attribute(match: re.Match[str], owner: str, noun: str, manner: _Manner,
                     role: str) -> list[Statement] | None:
    """"Ana's manager is Ben", "Zoe's rent was raised to 1000 euros": an attribute of the
    person named, read like the speaker's own ("my manager is Ben")."""
    value = match["v"]
    if _not_a_name(owner) or "'s " in noun:
        return None  # "Today's meeting is ...", "Ana's sister's name ...": other readers
    if noun in _RELATIVES and (_ARTICLE.match(value) or not value[:1].isupper()):
        return None  # "Ana's sister is a nurse": a statement about the sister
    if _RELATIVE_NAMED.match(noun):
        return None  # "Ana's daughter Mia is 7": a statement about Mia
    if owner.casefold() == "user":  # a third-person restatement of the speaker's own
        holder = _Holder(USER, "User") if role == "user" else None
        if holder is None:
            return []
        return _set_attribute(match, holder, noun, match.string, manner)
    holder = _Holder(f"person:{owner.casefold().replace(' ', '_')}", owner)
    return _set_attribute(match, holder, noun, match.string, manner)


def _set_attribute(match: re.Match[str], holder: _Holder, noun: str, clause: str,
                   manner: _Manner) -> list[Statement] | None:
    """The statement of a noun sentence's attribute, a change when its words say so."""
    of = match.groupdict().get("of")
    timed = match.groupdict().get("timed")
    if timed:  # "my shift starts at 7": the shift's start
        noun = f"{noun} {verb_lemma(timed.casefold()) or timed}"
    attribute = noun_attribute(noun, of)
    if attribute == f"uses_{noun.casefold()}" and noun.casefold() in _ROLE_NOUNS \
            and _category(match["v"]) is None and match["v"][:1].isupper():
        attribute = _ATTRIBUTE_NOUNS.get(noun.casefold(), slug(noun))  # "Omar's editor is Lena"
    if attribute == "phone" and _category(match["v"]) == "phone" \
            and not re.search(r"\d{3}", match["v"]):
        attribute = "uses_phone"  # "my phone is an iPhone 12": the model, not the number
    age = _AGE.match(match["v"]) if attribute == "has_pet" else None
    if age is not None and holder.key == USER:  # "my cat is 4 years old": the cat's age
        pet = _Holder(f"person:user_{slug(noun)}", f"User's {noun}")
        return [_attribute_statement(pet, "age", age["n"], manner)]
    if attribute == "has_pet" and not match["v"][:1].isupper():
        return None  # "my dog is sick": how the pet is, not which pet
    if attribute == "has_pet":  # "my dog is named Rex", "Rex is my dog": one pet of several
        return [_pet_statement(holder, noun, match["v"], manner)]
    moved = re.search(r"\b(?:raised|increased|moved|pushed|changed|handed|given|reassigned|"
                      r"bumped|lowered|cut|reduced|updated|postponed|delayed|now|went|gone|"
                      r"rose|risen|dropped|fell|fallen|decreased|jumped|climbed|grew|"
                      r"grown|doubled|shrank|shrunk|shifted|slipped|switched)\b",
                      clause, _I)
    if holder.key.startswith("topic:") and re.search(r"\bhanded|given|reassigned\b", clause):
        attribute = "owner"
    changed = manner.change or bool(match["new"]) or moved is not None
    shown = f"{noun} for {of}" if of else noun
    return [_attribute_statement(holder, attribute, match["v"],
                                 replace(manner, change=changed), shown)]


# -- statements ----------------------------------------------------------------------------
_CHANGE_VERBS = frozenset({"move", "relocate", "join", "switch", "migrate", "start", "marry",
                           "turn", "change", "become", "get", "transfer", "upgrade",
                           "downgrade", "retire"})
_PERMANENT = frozenset({"born_in", "birthday", "grew_up_in", "from"})
_CHANGE_TAIL = re.compile(r"\b(?:anymore|any more|now|these days|nowadays|from now on|"
                          r"no longer|in (?:years|ages|months|forever|a long time)|"
                          r"instead(?!\s+of))\b", _I)


def _importance(attribute: str, verb: str | None, manner: _Manner, holder: str) -> int:
    if manner.pinned:
        return 10
    if manner.past and attribute not in _PERMANENT:
        score = 3
    elif holder.startswith("person:"):
        score = 5
    elif attribute in _IDENTITY:
        score = 9
    elif attribute == "lives_in" or attribute.startswith("decision") or attribute == "decided":
        score = 7
    elif manner.habit or manner.strong or attribute.startswith("favourite_") \
            or attribute == "prefers":
        score = 8
    elif attribute.startswith("deadline") or holder == PROJECT or attribute in _PROFILE:
        score = 6
    elif attribute.startswith("uses") or attribute in ("speaks", "learns", "has_pet"):
        score = 5
    else:
        score = 4
    return max(score, 7) if manner.change else score


def _kind(attribute: str, manner: _Manner, holder: str) -> str:
    if manner.past and attribute not in _PERMANENT:
        return "episodic"
    if attribute.startswith("decision") or attribute == "decided":
        return "episodic"
    if manner.habit:
        return "procedural"
    if holder == USER and (attribute in _IDENTITY or attribute in _PROFILE):
        return "user_profile"
    return "semantic"


def past_attribute(attribute: str, verb: str | None) -> str:
    """The attribute of a past claim, which never competes with the current one:
    lives_in → lived_in, located_in → visited, phone → former_phone."""
    if attribute == "located_in":
        return "visited"
    if verb is not None:
        return inflect(verb, "VBD").replace(" ", "_")
    if attribute in _VERB_PHRASE:
        lemma, prep = _VERB_PHRASE[attribute]
        return "_".join(p for p in (inflect(lemma.split()[0], "VBD"), *prep.split()) if p)
    return f"former_{attribute}"


def _statement(holder: _Holder, attribute: str, phrase: str, content: str, manner: _Manner,
               verb: str | None, *, time_is_value: bool = False) -> Statement:
    value = clean_value(phrase, time_is_value=time_is_value)
    tense = "past" if manner.past else ("future" if manner.future else "present")
    confidence = min(holder.confidence, 0.5 if manner.hedged else 0.9)
    named = value if value[:1].isupper() else ""  # entities are names, not common nouns
    entities = tuple(dict.fromkeys(e for e in (_entity(holder), named) if e))
    return Statement(
        holder=holder.key, attribute=attribute, value=value, content=content,
        kind=_kind(attribute, manner, holder.key),
        importance=_importance(attribute, verb, manner, holder.key), negated=manner.negated,
        explicit_change=manner.change, hedged=manner.hedged, pinned=manner.pinned,
        tense=tense, confidence=confidence, holder_name=holder.name, entities=entities,
    )


def _entity(holder: _Holder) -> str:
    if holder.key == USER:
        return "User"
    if holder.key == PROJECT or holder.key.startswith("pronoun:"):
        return ""  # the team is the scope, a pronoun no one yet: not entities of the graph
    return holder.name.split()[-1] if holder.key.startswith("person:") else holder.name


#: Words that point outside the sentence: a claim that needs them cannot stand on its own.
_DEICTIC = frozenset("""i me my mine you your yours we us our it its they them their he him his
    she her this that these those here there someone something""".split())


def stands_alone(claim: _Claim, manner: _Manner) -> bool:
    """A claim of a verb outside the class table ("User wants them to...", "The team is be
    content") is kept only when it reads on its own: not hedged, no pronoun pointing
    elsewhere, a short complement. Its turn keeps what was said either way."""
    if claim.verb is None:
        return True
    words = re.findall(r"[a-z']+", _untimed(claim.phrase).casefold())  # "this year": a time
    owned = words[1:] if words[:1] == ["their"] else words  # "User walks their dog"
    return not manner.hedged and len(words) <= 8 and not _DEICTIC.intersection(owned) \
        and (not words or verb_lemma(words[0]) != "be")


#: An amount of pay: "95k", "$4,000 a month", "60 grand".
_PAY = re.compile(r"^(?:about |around |roughly |over |almost )?(?:[$€£]\s?\d[\d,.]*\s*[km]?|"
                  r"\d[\d,.]*\s*(?:k|grand|dollars|euros|pounds|bucks)|\d[\d,.]*\s*[km]? "
                  r"(?:a|per) (?:year|month|hour|week))(?: (?:a|per) (?:year|month|hour|week))?"
                  r"(?: before tax| after tax)?$", _I)


def _claim_statements(holder: _Holder, verb: _Verb, claim: _Claim) -> list[Statement]:
    manner = verb.manner
    if claim.verb is not None and holder.key == USER:  # "I see my therapist every week"
        claim = replace(claim, phrase=re.sub(r"^my\s+(?=\w)", "their ", claim.phrase,
                                             flags=_I))
    if not stands_alone(claim, manner):
        return []
    if holder.key == PROJECT and claim.attribute in ("lives_in", "relationship_status",
                                                     "has_pet"):
        holder = _Holder(USER, "User", holder.confidence)  # "we moved to X": so did the user
    into_state = verb.lemma in _INTO_STATE and claim.attribute in _STATE_FAMILIES
    changes = (verb.lemma in _CHANGE_VERBS or into_state) and claim.verb is None \
        and not manner.future
    if (manner.past and changes) or claim.attribute in _PERMANENT:
        manner = replace(manner, past=False)
    if changes and not manner.negated:
        manner = replace(manner, change=True)
    if claim.attribute in ("visited", "met"):
        manner = replace(manner, past=True)
    if claim.old is not None and verb.lemma != "prefer":
        manner = replace(manner, change=True)
    manner = replace(manner, strong=verb.lemma in _STRONG)
    if verb.lemma == "stand":  # "can't stand X" is a dislike, not a negated one
        manner = replace(manner, negated=not manner.negated)
    attribute, lemma = claim.attribute, claim.verb
    if attribute in ("likes", "dislikes") and verb.lemma not in ("like", "dislike", "stand"):
        lemma = verb.lemma  # keep the strength: "User hates X", "User loves Y"
    bare = attribute == "does" and claim.phrase == claim.verb  # "I work out": no object
    phrase = "" if bare else _phrase(claim.phrase)
    if verb.lemma in ("make", "earn") and _PAY.match(phrase):  # "I make 95k now"
        attribute, lemma = "salary", None
    pointed = attribute in _PLACE_ATTRIBUTES and clean_value(phrase).casefold() in (
        "there", "here")  # "moved there": the place named before it (``_resolved``)
    if not bare and not pointed and not content_words(clean_value(phrase)) \
            and not re.search(r"\d", phrase):
        return []
    if manner.future:
        content = f"{holder.name} will {'not ' if manner.negated else ''}" \
                  f"{lemma or _VERB_PHRASE.get(attribute, ('be', ''))[0]} " \
                  f"{_VERB_PHRASE.get(attribute, ('', ''))[1]} {phrase}"
        content = re.sub(r"\s+", " ", content).strip()
        attribute = f"will_{attribute}"
    elif manner.past:
        content = render(holder.name, attribute, _past_phrase(verb.rest, phrase), past=True,
                         negated=manner.negated, verb=lemma)
        attribute = past_attribute(attribute, lemma)
    else:
        content = render(holder.name, attribute, phrase, negated=manner.negated,
                         change=manner.change, verb=lemma,
                         past=verb.manner.past and attribute in _PERMANENT)
    if attribute == "does":
        phrase = claim.phrase
    if claim.tail:
        content = f"{content} {claim.tail}"
    items = _items(phrase) if not is_single_valued(attribute) else [phrase]
    statements = [_statement(holder, attribute, item, content if items == [phrase] else
                             render(holder.name, attribute, item, negated=manner.negated,
                                    change=manner.change, past=manner.past, verb=lemma),
                             manner, lemma) for item in items]
    housed = _HOUSED_IN.match(phrase) if attribute == "lives_with" else None
    if housed and not manner.negated and not manner.future and not manner.past:
        # "moved in with my aunt in Tucson": where they live, too
        statements.append(_statement(holder, "lives_in", housed.group("place"), render(
            holder.name, "lives_in", housed.group("place"), change=manner.change), manner,
            "live"))
    if claim.old is not None and not is_single_valued(attribute) and content_words(claim.old) \
            and verb.lemma != "prefer":
        gone = replace(manner, negated=True, change=True)
        statements.append(_statement(holder, attribute, claim.old, render(
            holder.name, attribute, claim.old, negated=True, change=True, verb=lemma), gone,
            lemma))
    return statements


#: Who someone lives with, then where: "my aunt in Tucson" (the place named).
_HOUSED_IN = re.compile(r"^.+? (?:in|near) (?P<place>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)$")


def _past_phrase(rest: str, phrase: str) -> str:
    """A past event keeps its time ("User met Carla last week.")."""
    when = _TIME_TAIL.search(_TRAIL.sub("", rest))
    tail = when.group(0).strip(" ,") if when and _PAST_TIME.search(when.group(0)) else ""
    return f"{phrase} {tail}".strip()


#: An object closed by a change adverb, then a comma and whatever else was said.
_CLOSED_BY_TIME = re.compile(r"^(?P<object>.+?)\s+(?:anymore|any more|no more|these days|"
                             r"nowadays|now|at the moment|currently)\s*,\s*\S", _I)


def _items(phrase: str) -> list[str]:
    """"English, French and Spanish" → three values when each is a short noun phrase."""
    closed = _CLOSED_BY_TIME.match(phrase)
    if closed:  # "the car anymore, sold it": the adverb ends the object, a remark follows
        return [closed.group("object")]
    parts = [p.strip() for p in re.split(r"(?<!\d),\s*(?:and\s+|or\s+)?|,(?!\d{3}\b)\s*"
                                         r"(?:and\s+|or\s+)?|\s+(?:and|or)\s+", phrase)
             if p.strip()]  # "$1,975" is one number
    # "coffee at all, just tea": what it is instead is said as a contrast, not another item
    contrast = [p for p in parts if re.match(r"(?:just|only)\s", p, _I)]
    if contrast and len(contrast) < len(parts):
        return [p for p in parts if p not in contrast]
    if len(parts) > 1 and all(len(p.split()) <= 3 for p in parts):
        # "Paris, it's beautiful": what follows a pointing word is a remark, not an item
        return [p for p in parts if p.split()[0].casefold().split("'")[0] not in _DEICTIC] \
            or [phrase]
    return [phrase]


#: "My flight lands at 3:40", "The meeting starts at 10": when a thing of one's own does
#: what it does once (one time: a new one replaces it).
_TIMED_EVENT = re.compile(r"^(?P<det>my|our|the) (?P<noun>(?:[a-z-]+ ){0,2}?[a-z-]+) "
                          r"(?P<verb>lands|leaves|departs|arrives|starts|begins|ends|finishes|"
                          r"opens|closes|boards|takes off|kicks off|wraps up) "
                          r"(?P<v>(?:at|on|around|by|in) .+)$", _I)


def _timed_event(clause: str, manner: _Manner, role: str) -> list[Statement] | None:
    """The time of a possessed thing's one event, as a slot of its own (``flight_lands``)."""
    said = _TIMED_EVENT.match(clause)
    if said is not None and _ANOTHER_HOLDER.match(clause):  # "my mother-in-law arrives …"
        return None
    holder = _det_holder(said["det"], said["noun"], role) if said else None
    if said is None or holder is None or holder.key not in (USER, PROJECT):
        return None
    verb = said["verb"].casefold().split()[0]
    attribute = f"{slug(said['noun'], limit=3)}_{verb}"
    when = re.sub(r"^(?:at|on|around|by|in)\s+", "", said["v"], flags=_I)
    found = _statement(holder, attribute, when, third_person(clause), manner, None,
                       time_is_value=True)
    return [replace(found, single=True)]


def _mention(clause: str, manner: _Manner, role: str) -> list[Statement]:
    """A declarative clause no rule reads: kept as a casual mention without a slot."""
    if role != "user" or len(clause.split()) < 3 or len(content_words(clause)) < 2:
        return []  # a fragment is not a statement
    names = tuple(dict.fromkeys(re.findall(r"(?<!^)\b[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)*",
                                           clause)))
    content = third_person(clause)
    return [Statement(holder=USER, attribute=None, value=None, content=content,
                      kind="semantic", importance=10 if manner.pinned else 3,
                      negated=manner.negated, explicit_change=manner.change,
                      hedged=manner.hedged, pinned=manner.pinned,
                      confidence=0.5 if manner.hedged else 0.7, entities=names)]


def third_person(text: str) -> str:
    """'my passport expires in May' → "User's passport expires in May"."""
    for pattern, replacement in ((r"^i am\b", "User is"), (r"^i have\b", "User has"),
                                 (r"^i\b", "User"), (r"\bmy\b", "User's"),
                                 (r"\bme\b", "the user"), (r"\bmyself\b", "the user"),
                                 (r"\bi\b", "the user"), (r"\bour\b", "the team's"),
                                 (r"^we\b", "The team")):
        text = re.sub(pattern, replacement, text, flags=_I)
    text = _TRAIL.sub("", text)  # no full stop added: an unread clause stays as it was said
    return text[:1].upper() + text[1:]


# -- the entry point -----------------------------------------------------------------------
_CONTRACTION = re.compile(r"\b(I|we|you|they)'(m|re|ve|ll|d)\b", _I)
#: "she's 7", "he's a nurse": "is" (not "she's been", "he's got": "has").
_HE_IS = re.compile(r"\b(he|she)'s(?= (?:\d|an? |the |not |now |no longer |still |in |at |"
                    r"from |on |with |married|single|engaged|divorced|retired))", _I)
#: "my car's a model 3", "Mike's a nurse": "is" before an article.
_NOUN_IS_A = re.compile(r"\b((?!(?:it|that|what|there|here|who|let)\b)[a-z]+)'s(?= (?:(?:an?|not|"
                        r"no longer|still|at|in) |the \d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|"
                        r"sept|oct|nov|dec)[a-z]*\.? \d))", _I)
#: "my dentist's Dr. Okafor", "home airport's SEA": a clause opening with one's thing, then
#: "'s" and a name, a code or a number that ends the clause: "is" (``_noun_is_named``).
_NOUN_IS_NAMED = re.compile(
    r"(?:^|(?<=[.!?,;]\s))(?P<det>(?:my|our|his|her|their)\s+)?(?P<noun>[a-z]+(?:\s+[a-z]+){0,2}?)"
    rf"'s\s+(?P<v>(?:{_TITLE}\.?\s+)?[\w][\w'-]*(?:\s+[A-Z][\w-]*)?)"
    r"(?=\s*(?:[,.!?;]|$))", _I)
_HE_HAS = re.compile(r"\b(he|she)'s(?= (?:been|got|gone|had|done|never|already|just|finally|"
                     r"lived|worked|moved|started|finished|left|quit))", _I)
_EXPANDED = {"m": "am", "re": "are", "ve": "have", "ll": "will", "d": "would"}
_LETS = re.compile(r"^(?:let's|let us|we(?: will|'ll)) (?:go with|use|pick|choose) (?P<v>.+)$",
                   _I)


#: A cleft that puts the thing first: "Hiking is something I love", "Sushi is what we eat".
_CLEFT = re.compile(r"^(?P<thing>.+?) (?:is|are) (?:something|one thing|the thing|what) "
                    r"(?P<who>i|we) (?P<verb>(?:really |truly |can't |cannot |don't |do not )?"
                    r"[a-z]+)(?: (?:the )?(?:most|best|of all))?$", _I)


#: The place put first: "Lyon is where I grew up" says "I grew up in Lyon".
_WHERE_CLEFT = re.compile(r"^(?P<place>(?-i:[A-Z])[\w' -]*?|[a-z]+) is (?:the place )?where "
                          r"(?P<rest>(?:i|we) .+)$", _I)


#: "a big fan of X" likes X; "got rid of X" parted with it.
_FAN_OF = re.compile(r"\b(?:am|are|is) (?:(?:a |such a )?(?:big |huge |massive |great |real )?"
                     r"fans? of|(?:really |totally |kind of )?(?:obsessed with|hooked on|"
                     r"crazy about|into))\b", _I)
_RID_OF = re.compile(r"\b(?:(?:got|get|gets|getting|gotten) rid of|ditched)\b", _I)
#: Why something was done, which is not part of what was done: "… because of my allergy".
_REASON_TAIL = re.compile(r",?\s+(?:(?:because of|due to|thanks to|on account of)\s+[^,]+|"
                          r"now that (?:i|we|he|she|they|my|our)\b[^,]+|"
                          # "… after the neighbor kid got on it": why, not more of the value
                          r"(?:after|when|since|once)\s+(?:the|my|our|his|her|their|a|some)\s+"
                          r"(?:\w+\s+){0,3}?(?:got|was|were|had|did|found|started|broke|"
                          r"kept)\b.*|"
                          r"for (?:my|his|her|their|our) (?:health|own good|sanity|wellbeing)|"
                          r"for (?:health|religious|medical|personal|ethical|money) reasons)$", _I)
#: A phrasal verb with its object inside: "gave Luna away" is "gave away Luna".
_SPLIT_PHRASAL = re.compile(r"\b(?P<verb>[a-z]+) (?P<obj>(?:(?:my|our|his|her|their|the|a|an) )?"
                            r"[\w'-]+(?: [\w'-]+)?) (?P<particle>away|up|over|out|in)\b")


def _joined_phrasal(match: re.Match[str]) -> str:
    lemma = verb_lemma(match["verb"])
    if lemma is None or f"{lemma} {match['particle']}" not in _PHRASAL:
        return match.group(0)
    return f"{match['verb']} {match['particle']} {match['obj']}"


#: "We had to give Luna away": what was done, however unwillingly ("gave Luna away").
_HAD_TO = re.compile(r"\bhad to (?P<verb>[a-z]+)\b")


def _did(match: re.Match[str]) -> str:
    lemma = verb_lemma(match["verb"])
    if lemma is None or lemma != match["verb"]:  # "had to" takes a verb's base form
        return match.group(0)
    return inflect(lemma, "VBD")


#: A diary-style clause with no subject: "Just turned 30 today!", "Finally got my license".
_SUBJECTLESS = re.compile(r"^(?:(?:just|finally|recently|also|officially) )*(?=(?:turned|got|"
                          r"started|moved|bought|joined|quit|left|finished|adopted|sold|"
                          r"switched|became|began|passed|signed up|graduated|retired|"
                          r"landed|lost|won|traded|replaced|swapped|upgraded|cancell?ed|"
                          r"ditched|dropped|cut out|gave away|gave up|deleted|uninstalled|"
                          r"closed|deactivated|renewed|booked|hired|fired|adopted|transferred|"
                          r"relocated|enrolled|stopped|changed)\b)", _I)
#: "Down to 172 pounds this morning!": the diarist's own measure, moved.
_BARE_MEASURE = re.compile(rf"^(?=(?:down|up) to \d{{2,3}}(?:\.\d)?\s?(?:{_WEIGHT_UNITS}|stone)\b)",
                           _I)
#: "Now reading 'Dune'": what the user is doing now (after the time that says so).
_DOING = re.compile(r"^(?:reading|watching|playing|learning|studying|working|using) \S", _I)
#: "I'm a huge Beatles fan": likes the Beatles; "fluent in French": speaks it.
_NAMED_FAN = re.compile(r"\b(?P<be>am|are|is) (?:a |such a )?(?:big |huge |massive |great |"
                        r"real |die-?hard |lifelong )?(?P<x>(?-i:[A-Z][\w'&.-]*)"
                        r"(?: (?-i:[A-Z][\w'&.-]*))*) (?:fan|fanatic|nut)\b", _I)
_FLUENT_IN = re.compile(r"\b(?:am|are|is) (?:fluent|native|conversational|proficient) in\b", _I)
#: "We transferred the kids to Oak Park Elementary": the kids go there now.
_MOVED_SCHOOL = re.compile(r"^(?:i|we)(?: have| had)? (?:transferred|moved|switched|enrolled|"
                           r"put) (?:(?:my|our|the) (?P<kin>kids|children|son|daughter|boy|girl|"
                           r"twins)|(?P<name>(?-i:[A-Z][a-z]+))) (?:to|in|at|into) (?P<v>.+)$",
                           _I)


#: "I bought a new car, a red Mazda": my car is the Mazda now (a new pet joins the others).
_NEW_THING = re.compile(r"^(?:i|we)(?: have| just)? (?:bought|got|purchased|leased) "
                        r"(?:a|an|my|our) (?:new|different|another) "
                        r"(?P<noun>[a-z]+(?: [a-z]+)?)\s*[,:-]\s*(?:an?|the) (?P<v>.*[A-Z0-9].*)$",
                        _I)


def _new_thing(match: re.Match[str]) -> str:
    if match["noun"].split()[-1].casefold() in _PETS:
        return match.group(0)
    return f"my {match['noun']} is now {match['v']}"


def _moved_school(match: re.Match[str]) -> str:
    who = f"my {match['kin']}" if match["kin"] else match["name"]
    plural = match["kin"] in ("kids", "children", "twins")
    return f"{who} now {'go' if plural else 'goes'} to {match['v']}"


#: "Please reply in Spanish from now on", "Switch back to English": the language the user
#: wants to be answered in.
_REPLY_IN = re.compile(r"^(?:please |can you |could you )?(?:(?:always|only|just) )?(?:(?:reply|"
                       r"respond|answer|write|talk|speak|communicate)(?: to me)?(?: only)? in|"
                       r"switch(?: back)? to|go back to|use) (?P<v>(?-i:[A-Z][a-z]+))"
                       r"(?: please| instead| again| with me)*$", _I)
#: "Please use sam@new.com", "reach me at 555-0199": the address or number to use now.
_REACH_ME = re.compile(r"^(?:please )?(?:use|contact me (?:at|on)|reach me (?:at|on)|email me at|"
                       r"text me (?:at|on)|call me (?:at|on)|write to me at)(?: my new)? "
                       r"(?P<v>[\w.+-]+@[\w-]+\.[\w.]+|\+?\d[\d ()-]{5,}\d)"
                       r"(?: instead| please| going forward)*$", _I)
#: "no more glasses": a clause that only says a thing is gone.
_NO_MORE = re.compile(r"^(?:and |so )?no more (?P<x>[\w' -]{2,40})$", _I)
_LANGUAGES = frozenset("""english spanish french german portuguese italian dutch japanese chinese
    mandarin cantonese korean russian arabic hindi polish swedish norwegian danish finnish
    turkish greek hebrew czech ukrainian vietnamese thai indonesian romanian hungarian
    catalan""".split())
#: "I prefer short, concise answers": how the user wants to be answered, one way at a time.
_ANSWER_STYLE = re.compile(r"^(?P<v>.+? (?:answers|responses|replies|explanations|summaries))$",
                           _I)


#: "Alice owns the billing service": who holds a thing of the team's.
_OWNS = re.compile(r"^(?P<v>(?-i:[A-Z][a-z]+)(?: (?-i:[A-Z][a-z]+))?) (?:owns|leads|runs|manages|"
                   r"maintains|heads|is in charge of|is responsible for) (?P<thing>(?:the |our )?"
                   r"[\w' -]{0,50}\b(?:project|account|team|client|service|repo|budget|"
                   r"portfolio|initiative|launch|migration|release|roadmap|pipeline))$", _I)
#: "Mia and I split up", "I broke up with Mia": Mia is no longer the user's partner.
_SPLIT_UP = re.compile(r"^(?:(?P<x>(?-i:[A-Z][a-z]+)) and i (?:have |had )?(?:split up|broke up|"
                       r"separated|got divorced|divorced|called it quits)|i (?:have |had )?"
                       r"(?:split up with|broke up with|divorced|separated from|dumped) "
                       r"(?:my (?:girlfriend|boyfriend|partner|wife|husband|fiancée?) )?"
                       r"(?P<y>(?-i:[A-Z][a-z]+)))$", _I)
#: "Dev stepped down as team lead": no longer is it.
_STEPPED_DOWN = re.compile(r"^(?P<v>(?-i:[A-Z][a-z]+)(?: (?-i:[A-Z][a-z]+))?) (?:has )?(?:stepped "
                           r"down|resigned|stood down) (?:as|from(?: being)?) (?:the |our )?"
                           r"(?P<role>[\w' -]{2,40})$", _I)


#: "launch slipped to March 17": with no determiner, the team's slot, moved in time.
_BARE_SLIPPED = re.compile(r"^(?!(?:my|our|the|his|her|their|a|an|this|that|it|i|we)\b)"
                           r"(?P<noun>[a-z][a-z]+(?: [a-z]+)?) (?:has |was |got )?"
                           r"(?:(?:slipped|moved|shifted|pushed|postponed|delayed|bumped|"
                           r"rescheduled)(?: back| out)? (?:to|until)|(?:will be|is now|is going "
                           r"to be) (?:at|on)) (?P<v>.+)$", _I)


def _bare_slipped(match: re.Match[str]) -> str:
    noun = match["noun"]
    first, _, more = noun.partition(" ")
    if first[:1].isupper() and not (more and more.islower() and _is_noun(first.casefold())):
        return match.group(0)  # "Tom moved to …": a name; "Soccer practice moved to …": a thing
    if not _WHEN.match(match["v"]):
        return match.group(0)
    return f"the {noun[:1].lower()}{noun[1:]} was moved to {match['v']}"


#: "Bo outgrew the shellfish allergy": no longer allergic.
_OUTGREW = re.compile(r"\b(?:has |have )?outgr(?:ew|own) (?:the |his |her |my |their |a )?"
                      r"(?P<x>[\w -]+?) allergy\b", _I)
#: "I'm off my antidepressants now": no longer on them.
_OFF_MY = re.compile(r"\b(?P<be>am|are|is|have been|'ve been|has been)(?: completely| totally)? "
                     r"off (?:of )?(?:my|the|his|her|their) (?P<x>[\w -]+?)"
                     r"(?= now\b| for good\b| completely\b| anymore\b| since\b| for\b|$)", _I)


#: "Forget the Vespa, I'm saving for a down payment now": the new claim instead of the old.
_FORGET_THE = re.compile(r"^(?:forget|scratch|never ?mind|so much for)(?: about)? "
                         r"(?P<old>(?:the|my|our|a|an) [\w' -]{1,30}?|(?-i:[A-Z])[\w-]+)"
                         r"\s*[,;:—–-]\s*(?P<new>(?:i|we)\b.+?)[.!]*$", _I)
#: "Jess is seeing Leo": dating him (not "seeing Dr. Kim", not "seeing Hamilton tonight").
_SEEING = re.compile(r"(?P<be>\s(?:is|am|are)|'s|'m|'re) (?:now )?seeing "
                     r"(?P<x>(?!(?:Dr|Doctor|Mr|Mrs|Ms|Prof)\b)(?-i:[A-Z][a-z]+))"
                     r"(?=(?: now| again| these days)?\s*(?:[.!,;]|$))", _I)
_BE_SAID = {"'s": " is", "'m": " am", "'re": " are"}
#: "My passport expires in 2027", "The lease ends in June": when it runs out (one date).
_EXPIRES = re.compile(r"(?:^|(?<=\band )|(?<=\bbut )|(?<=, ))(?P<det>my|our|his|her|their|the) "
                      r"(?P<noun>(?:[a-z][\w-]* ){0,2}?"
                      r"(?:[a-z][\w-]* (?:expires|runs out)|(?:lease|visa|trial|warranty|"
                      r"contract|membership|subscription) ends)) "
                      r"(?P<v>(?:in|on|at|by|next|this) .+?|\d.*?)$", _I)


def _expires(match: re.Match[str]) -> str:
    noun = re.sub(r" (?:expires|runs out|ends)$", "", match["noun"])
    return f"{match['det']} {noun} expiry is {match['v']}"
#: "I'm down to one coffee a day": how much of a habit, said with what it counts.
_DOWN_TO = re.compile(r"^(?P<who>i|we) (?:am|are) (?:now )?(?:down|up) to (?P<v>(?:\d+|one|two|"
                      r"three|four|five|six|seven|eight|nine|ten|a|an|half a) (?P<noun>[a-z]+)"
                      r"(?: (?:a|per|each) (?:day|week|month|night))?)", _I)
#: The habit a count's noun names: what "down to two cigarettes a day" is of.
_COUNTED_HABITS = {"drink": frozenset("coffee cup tea beer glass drink espresso can soda latte "
                                      "pint".split()),
                   "smoke": frozenset("cigarette pack smoke cig joint".split())}


def _down_to(match: re.Match[str]) -> str:
    noun = match["noun"].casefold()
    for verb, nouns in _COUNTED_HABITS.items():
        if noun in nouns or noun.removesuffix("s") in nouns or noun.removesuffix("es") in nouns:
            return f"{match['who']} now {verb} {match['v']}"
    return match.group(0)


#: "I'm off keto now", "off Lexapro": a diet, a substance or a named drug given up.
_OFF_BARE = re.compile(r"\b(?P<be>am|are|is) off (?P<x>(?-i:[A-Z])[\w-]+|keto|paleo|carbs|sugar|"
                       r"caffeine|alcohol|gluten|dairy|meat|booze|nicotine|coffee|social media)"
                       r"(?= now\b| for good\b| completely\b| anymore\b|\s*[.!]?$)", _I)
#: "My sister's cat Luna died": the sister no longer has Luna.
#: How a pet is gone: it died, or it got away.
_PET_LOST = (r"died|passed away|passed|flew away|ran away|ran off|went missing|got lost|"
             r"disappeared")
_THEIR_PET_DIED = re.compile(rf"^(?P<owner>my (?:{'|'.join(_RELATIVES)})|(?-i:{_NAME}))'s "
                             rf"(?:{'|'.join(sorted(_PETS))}),? (?P<name>(?-i:{_NAME})),? "
                             rf"(?:{_PET_LOST})\b.*$", _I)
#: "My son got his braces off": no longer has them.
_GOT_OFF = re.compile(r"\bgot (?P<det>his|her|their|my) (?P<x>[\w -]+?) (?:off|removed|out)\b",
                      _I)
#: "Our team has 8 engineers": the team's, said as "we have".
_OUR_GROUP_HAS = re.compile(r"^our (?:team|company|group|startup|org|organization|department) "
                            r"(?:has|have) ", _I)
#: "Mom changed her number": the user's mom.
_KIN_NAME = re.compile(r"^(?P<kin>mom|mum|dad|grandma|grandpa|granny|nana)\b(?!')", _I)
#: "I've got a golden retriever": has one.
_HAVE_GOT = re.compile(r"\b(?P<have>have|has) got (?=(?:a|an|one|two|three|four|\d+|my|no|some)\b)",
                       _I)
#: "My dog Max is a golden retriever": a golden retriever named Max.
_PET_IS = re.compile(rf"^my (?P<kind>{'|'.join(sorted(_PETS))}),? (?P<name>(?-i:{_NAME})),? "
                     r"is an? (?P<breed>[a-z][\w -]{1,30})$", _I)
#: "I'm getting 8 hours of sleep a night": sleeps 8 hours.
_HOURS_OF_SLEEP = re.compile(r"\b(?:am |are )?(?:getting|get|got) (?:about |around )?"
                             r"(?P<n>\d+(?:\.\d)?|[a-z]+) hours of sleep", _I)
#: "We turned the home office into a nursery": it is no longer, the nursery is.
_TURNED_INTO = re.compile(r"^(?P<who>i|we) (?:have )?(?:turned|converted|made) (?:the|my|our) "
                          r"(?P<x>[a-z][\w -]{1,30}?) into (?P<y>(?:a|an) [a-z][\w -]{1,30})$",
                          _I)


#: "I get up at 6am": wake up.
_GET_UP = re.compile(r"\b(?P<v>get|gets|getting|got) up\b", _I)


def _woke(match: re.Match[str]) -> str:
    return {"get": "wake", "gets": "wakes", "getting": "waking", "got": "woke"}[
        match["v"].casefold()] + " up"


#: "I'm obsessed with Severance now, it's my new favourite show": Severance is.
_IT_IS_MY = re.compile(r"^(?P<pre>.*?\b(?P<thing>(?-i:[A-Z][\w'&-]*)(?: (?-i:[A-Z][\w'&-]*))*)"
                       r"(?: now| these days)?),\s*(?:it's|it is|that's|that is) "
                       r"(?P<rest>my (?:new )?(?:favou?rite|go-to) [a-z][\w ]{1,30})$", _I)
#: "I take my coffee black": how the user has it.
_HOW_I_TAKE = re.compile(r"^i (?:drink|take|have|like) my (?P<x>coffee|tea) (?P<how>black|"
                         r"(?:with|without) [\w ]{2,30}|sweet|strong|iced|decaf|plain)$", _I)
#: "went back to eating meat": started it again.
_WENT_BACK = re.compile(r"\b(?:went|gone|go|goes|going) back to (?=\w+ing\b)", _I)


#: "unsubscribed from X": cancelled X.
_UNSUBSCRIBED = re.compile(r"\bunsubscribed from\b", _I)
#: "was laid off from the bank", "got fired from Acme": no longer works there.
_LAID_OFF = re.compile(r"\b(?:was|were|got|has been|have been|'s been|'ve been) "
                       r"(?:laid off|fired|let go|made redundant) (?:from|at|by) ", _I)
#: "born and raised in X": born there, and grew up there.
_BORN_AND_RAISED = re.compile(r"\b(?P<be>was|were) born and (?:raised|brought up) in "
                              r"(?P<x>[^,.;!?]+)", _I)


#: "I've switched to Stumptown as my favourite coffee shop": my favourite coffee shop is now
#: Stumptown.
_AS_MY = re.compile(r"^(?:i|we)(?: have| had)? (?:(?:switched|changed|moved)(?: over)?|gone over|"
                    r"gone) to "
                    r"(?P<v>.+?) as (?P<det>my|our) (?P<noun>[a-z][\w' -]{1,40})$", _I)


#: Who one is insured or served by: "im with progressive for car insurance" (my car insurance
#: is progressive), "my car insurance is through geico" (is geico).
_INSURED_WITH = re.compile(r"^(?:i am|i'm|we are|we're|i|we) (?:with|through|(?:insured|covered) "
                           r"(?:with|through|by)) (?P<v>[\w&'. -]+?) for (?:my |our |the )?"
                           r"(?P<noun>(?:car|auto|home|health|life|renters|pet|travel|dental) "
                           r"insurance)$", _I)
#: "I'm insured with State Farm for the car", "we're insured through Progressive for both
#: cars": the insurance of that thing.
_INSURED_FOR = re.compile(r"^(?:i am|i'm|we are|we're|i|we) (?:insured|covered) "
                          r"(?:with|through|by) (?P<v>[\w&'. -]+?) for "
                          r"(?:my |our |the |both |all )?(?:\w+ )?"
                          r"(?P<what>car|house|home|apartment|pet|dog|cat|teeth|health|life)s?$",
                          _I)
_INSURED_KIND = {"house": "home", "apartment": "renters", "dog": "pet", "cat": "pet",
                 "teeth": "dental"}
_THROUGH = re.compile(r"^(?P<np>(?:my|our) (?:[\w-]+ ){0,2}(?:insurance|provider|carrier|bank|"
                      r"banking|plan|coverage)) is (?:with|through|via|at) ", _I)


#: "(I) replaced the router with an eero pro 6": my router is now the eero.
_REPLACED_WITH = re.compile(r"^(?:i |we )?(?:have |had |just |finally )?replaced the "
                            r"(?P<noun>(?-i:[a-z][a-z -]{0,30}?)) with (?:an? |the |my |our )?"
                            r"(?P<v>.+)$", _I)  # "my MacBook Pro with a ThinkPad": a possession


#: "(I) switched to oat milk in my coffee": my coffee is now oat milk.
_SWITCHED_IN_MY = re.compile(r"^(?:i |we )?(?:have |had |just )?(?:switched|changed|moved|gone)"
                             r"(?: over)? to (?P<v>.+?) (?:in|for|on|with) (?P<det>my|our) "
                             r"(?P<noun>[a-z][\w' -]{1,30})$", _I)


#: "I've switched my preferred language to Rust": my preferred language is now Rust.
_SET_MY = re.compile(r"^(?:(?:i|we|(?P<name>(?-i:[A-Z][a-z]+))|(?:my |the |our )?(?:doc|doctor|"
                     r"gp|pcp|psychiatrist|therapist|vet|dentist|nurse|pharmacist|boss|manager|"
                     r"landlord|hr|they|he|she))(?: have| had| has)? )?"
                     r"(?:switched|changed|set|updated|moved|upped|raised|increased|bumped|"
                     r"cut|reduced|lowered|dropped|extended|shortened|decreased|pushed|reset) "
                     r"(?P<det>my|our|his|her|their|the) "
                     r"(?P<noun>[a-z][\w' -]{1,40}?)(?: back| up| down)? to (?P<v>.+)$", _I)

#: "switched car insurance to progressive": the thing, named with no "my", is the speaker's.
_SET_BARE = re.compile(r"^(?:(?P<who>i|we)(?: have| had)? )?(?:just |finally |recently )?"
                       r"(?:switched|changed|updated) (?P<noun>(?!(?:back|over|it|that|this|"
                       r"them|jobs?|careers?|gears?|sides?|teams?|up|around|things|from|it's|"
                       r"its)\b)[a-z][\w'-]*(?: (?!from\b)[a-z][\w'-]*){0,2}?) (?:over )?to "
                       r"(?P<v>.+)$", _I)

#: "started a new job as a paramedic": works as one now.
_NEW_JOB_AS = re.compile(r"\b(?:just )?(?:started|got|landed|took|accepted|found|began)\s+"
                         r"(?:a\s+)?(?:new\s+)?(?:job|position|role|career)\s+as\b", _I)
#: "The landlord raised my rent to $2,000": my rent was raised to it (whoever raised it).
_SET_BY_ANOTHER = re.compile(
    r"^(?!(?:i|we)\s)(?P<who>(?:[\w'.-]+\s){0,3}?[\w'.-]+) (?P<verb>raised|increased|lowered|"
    r"cut|reduced|bumped|moved|pushed|changed|postponed|delayed|updated|set|extended) "
    r"(?:(?P<det>my|our|the) )?(?!(?:me|him|her|his|them|their|us|it|its|from|back|up|out|"
    r"over|you|your)\b)(?P<noun>[a-z][\w' -]{1,40}?)"
    r"(?: back| forward| out| up)? (?P<prep>to|on) (?P<v>.+)$", _I)
#: "I switched gyms, I go to Crunch now": the gym is Crunch now (the plural names the slot).
_SWITCHED_KIND = re.compile(
    r"^(?:i|we)(?: have| had)?(?: finally| just| recently)? (?:switched|changed) "
    r"(?P<kind>[a-z]{3,}s)(?: again)?"
    r"\s*(?:,|;|:|-|—|–|and|so|and now)\s+(?:(?:now\s+)?(?:i|we)(?: am| are| have)?(?: now)? "
    r"(?:go to|going to|use|using|with|bank with|see|seeing|go with|belong to|got|shop at|"
    r"shopping at|fly with|flying with|go see|at|work at|working at|work for|working for)|"
    # "we changed vets, the new one is dr brooks"
    r"(?:the |our |my )?new one(?:'s| is)(?: now)?) "
    r"(?P<v>.+)$", _I)


#: "We switched internet providers to AT&T": the provider is AT&T now.
_SWITCHED_KIND_TO = re.compile(r"^(?P<who>i|we)(?: have| had)?(?: finally| just| recently)? "
                               r"(?:switched|changed) (?P<kind>[a-z]+(?: [a-z]+)?s) to "
                               r"(?P<v>.*[A-Z0-9].*)$", _I)


def _our(det: str | None) -> str:
    """The determiner said, "my" when none was ("hoa raised dues to $160": my dues)."""
    return det or "my"


def _switched_kind(match: re.Match[str]) -> str:
    kind = singular_nouns(match["kind"].casefold())
    if kind in ("job", "company", "employer"):  # "switched jobs — I'm at Stripe now"
        return f"I now work at {match['v']}"
    whose = "our" if (match.groupdict().get("who") or "").casefold() == "we" else "my"
    value = _labelled_value(match["v"])  # "crunch on 5th ave now, way better squat racks"
    return f"{whose} {kind} is now {value}" if kind != match["kind"].casefold() else \
        match.group(0)


#: Ways of saying a thing that the reader reads in their plain form, in this order.
#: "I moved all my accounts over to a credit union": that is where I bank now.
_MOVED_ACCOUNTS = re.compile(r"^(?:i|we)(?: have| had)? (?:moved|switched|transferred|took) "
                             r"(?:all )?(?:of )?(?P<whose>my|our) (?:bank(?:ing)? )?"
                             r"(?:accounts?|banking|savings|checking) (?:over )?to "
                             r"(?P<v>.+)$", _I)
#: "I changed my number, it's 555-0199 now": the thing changed, then what it is now.
_CHANGED_THING = (r"^(?:(?:i|we)(?: have| had| just)? (?:changed|switched|updated|replaced|"
                  r"renewed|reset) (?P<np>(?:my|our) (?:[a-z-]+ ){0,2}?[a-z-]+)|"
                  # "(I) had to get a new number": my number
                  r"(?:(?:i|we) )?(?:had to |have to |just )?(?:get|got|gotten) a new "
                  r"(?P<noun>(?:[a-z-]+ ){0,2}?[a-z-]+))")
_CHANGED_IT_IS = re.compile(_CHANGED_THING + r"\s*(?:,|;|:|—|-|and)\s*(?:it is|it's|the new "
                            r"one is)(?: now)? (?P<v>.+?)(?: now)?$", _I)
#: "Rent went up to $1,650", "Standup moved to 10:15": a slot named by a bare noun, set to an
#: amount or a time (a name moving to a place is a move: "Tom moved to Leeds").
_BARE_NOUN_SET = re.compile(
    r"^(?P<noun>[A-Za-z][a-z-]{2,20})(?P<verb> (?:went (?:up|down)|has gone (?:up|down)|"
    r"(?:has |was |got |is )?(?:moved|changed|pushed|postponed|rescheduled|raised|increased|"
    r"lowered|cut|reduced|bumped|shifted|slipped)(?: back| forward| up| down)?)) to "
    r"(?=[$€£\d]|(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|noon\b|midnight\b)", _I)
#: Nouns of the user's own a bare subject names ("Rent went up": my rent).
_OWN_BARE_NOUNS = frozenset({"rent", "salary", "pay", "mortgage", "commute", "budget",
                             "allowance", "bedtime", "bill"})


def _determined(match: re.Match[str]) -> str:
    noun = match["noun"].casefold()
    if noun in STOPWORDS or noun in ("he", "she", "they", "it", "we", "i"):
        return match.group(0)
    return f"{'my' if noun in _OWN_BARE_NOUNS else 'the'} {noun}{match['verb']} to "


_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
#: "My book club meets on Tuesdays": when it is.
_MEETS_ON = re.compile(rf"^(?P<det>my|our|the) (?P<noun>[a-z][a-z ]{{1,30}}?) (?:meets|happens|"
                       rf"is held|takes place) (?P<when>on {_DAYS})$", _I)
#: "Book club is on Wednesdays now": a thing named with no article, set to a weekday.
_BARE_NOUN_ON = re.compile(rf"^(?P<noun>(?-i:[A-Z][a-z]+(?: [a-z]+){{0,2}})) (?=is (?:now )?"
                           rf"(?:on|every) (?:other )?{_DAYS}\b)", _I)
#: Team events a bare noun names ("Standup is on Mondays now": the team's).
_TEAM_EVENTS = frozenset({"standup", "stand-up", "sprint", "retro", "retrospective", "launch",
                          "release", "demo", "offsite", "all-hands", "planning", "meeting"})


def _determined_on(match: re.Match[str]) -> str:
    noun = match["noun"].casefold()
    if noun.split()[0] in STOPWORDS or (" " not in noun and not _is_noun(noun)):
        return match.group(0)  # "Maria is on Mondays": a name
    return f"{'the' if noun in _TEAM_EVENTS else 'my'} {noun} "


#: "We let our cleaner go": no longer have one.
_LET_GO = re.compile(r"\blet (?P<x>(?:our|my|the) [a-z][\w -]{1,30}?) go\b", _I)
#: "I let my Sierra Club membership lapse": cancelled by not renewing.
_LET_LAPSE = re.compile(r"\blet (?P<x>(?:our|my|the|his|her|their) [\w' -]{1,40}?) "
                        r"(?:lapse|expire|run out)\b|"
                        r"\b(?:did not|didn't|chose not to|decided not to) renew "
                        r"(?P<y>(?:our|my|the|his|her|their) [\w' -]{1,40}?"
                        r"(?:membership|subscription|lease|contract|plan|pass))\b", _I)
#: "My doctor took me off Lexapro": no longer taking it.
_TOOK_ME_OFF = re.compile(r"^(?:my |the )?(?:doctor|doc|dr\.? \w+|psychiatrist|gp|physician|"
                          r"therapist|cardiologist|dermatologist|endo|endocrinologist|"
                          r"nurse practitioner) (?:has |had |just )?(?:took|taken) "
                          r"me off (?:of )?(?P<x>.+)$", _I)
#: "They moved me to the day shift", "My boss put me on the mobile team": where the user
#: works now, whoever moved them (the same as "I got moved to the day shift").
_MOVED_ME = re.compile(r"^(?!(?:i|we)\s)(?:(?:[\w'.-]+\s){0,3}?[\w'.-]+) (?:has |have )?"
                       r"(?:moved|put|switched|transferred|reassigned|assigned|bumped|placed|"
                       r"rotated) me (?:over )?(?:to|on|onto) (?P<x>(?:the|a|an) (?:[\w'-]+ ){0,3}?"
                       r"(?:shift|team|squad|department|unit|ward|floor|desk|project|office|"
                       r"rotation|account|crew|group|route|section|branch|store|site)s?)\b", _I)


def _moved_me(match: re.Match[str]) -> str:
    place = match["x"].rsplit(maxsplit=1)[-1].casefold().rstrip("s")
    inside = place in ("office", "branch", "site", "store", "department", "unit", "ward", "floor")
    return f"I am now {'in' if inside else 'on'} {match['x']}"


#: "I finally kicked smoking", "kicked the caffeine habit": quit it.
_KICKED = re.compile(r"\bkick(?:ed|ing)? (?:the |my )?(?P<x>[a-z]+ing|caffeine|sugar|alcohol|"
                     r"booze|cigarettes|nicotine|soda|coffee|weed|vaping)(?: habit)?\b", _I)
#: "I'm O negative": a blood type.
_I_AM_BLOOD_TYPE = re.compile(r"\bi am (?P<adv>actually |really )?(?P<t>(?:a|b|ab|o)(?:[ -]?"
                              r"(?:positive|negative|pos|neg)\b|[+-](?=\s|[,.;!?]|$)))"
                              r"(?:\s+(?:btw|fyi|lol|tho|though))*", _I)
#: "my lease is up in october": it ends then.
_IS_UP = re.compile(r"\b(?P<x>lease|contract|membership|subscription|warranty|visa|passport|"
                    r"license|licence|registration|policy|plan|term|trial) is up (?=in |on |at |"
                    r"by |next |this |end )", _I)
#: "I've moved off Apollo": no longer working on it.
_MOVED_OFF = re.compile(r"^(?P<who>i|we)(?: have|'ve)? (?:moved|rotated|come|came) off "
                        r"(?P<x>(?:the )?[\w' -]+?)(?= and |,|$)", _I)
#: "The office moved to Building 9": a thing's place (a person who moves lives there).
_THING_MOVED = re.compile(rf"^(?P<np>(?:the|our|my) (?!(?:{'|'.join(_RELATIVES)})\b)[a-z]+"
                          r"(?: [a-z]+)?) (?:has )?(?:moved|relocated) to "
                          r"(?P<v>(?-i:[A-Z0-9])[\w -]*)$", _I)


def _thing_moved(match: re.Match[str]) -> str:
    if _WHEN.match(match["v"]):  # "The meeting moved to Friday": a move in time
        return match.group(0)
    return f"{match['np']} is now in {match['v']}"


#: "switched back to regular coffee": a return is a switch like any other.
_BACK_TO = re.compile(r"\b(?P<verb>switched|switching|switch|changed|moved) back to\b", _I)
#: "My cat weighs 4 kg", "The vet says my cat is up to 5 kg now": the pet's weight.
_PET_WEIGHS = re.compile(r"^(?:(?:the|our|my) (?:vet|doctor) (?:says|said) (?:that )?)?"
                         rf"my (?P<pet>{'|'.join(sorted(_PETS))}) (?:weighs|is (?:up |down )?to|"
                         r"is now|is|now weighs) (?:about |around |almost |nearly )?"
                         rf"(?P<v>\d{{1,3}}(?:\.\d)?\s?(?:{_WEIGHT_UNITS}))(?: now)?$", _I)
#: "We moved grandpa to a care facility in Atlanta": he lives there now.
_MOVED_SOMEONE = re.compile(rf"^(?:we|i) (?:moved|relocated) (?P<who>(?:my |our )?"
                            rf"(?:{'|'.join(_RELATIVES)})) (?:in)?to (?P<where>.+)$", _I)


def _someone_moved(match: re.Match[str]) -> str:
    who = match["who"]
    if not re.match(r"(?:my|our) ", who, _I):
        who = f"my {who}"
    return f"{who} moved to {match['where']}"


#: "Ray retired from driving the school bus": he no longer does it ("retired from
#: teaching", with no object, is a retirement: it ends the job).
_RETIRED_FROM_DOING = re.compile(r"\bretired from (?=[a-z]+ing (?:the|a|an|my|his|her|their|"
                                 r"our)\b)", _I)
#: "My sister gave Luna to a friend": gave her away.
_GAVE_NAMED_TO = re.compile(r"\bgave (?P<x>(?-i:[A-Z])[a-z]+) (?:away )?to (?:a|an|the|my|his|her|"
                            r"their|our|some) [a-z]+(?: [a-z]+)?$", _I)
#: "We migrated our CI from Jenkins to GitHub Actions": the tool for it now.
_MIGRATED_FROM_TO = re.compile(r"\b(?P<who>i|we)(?: have| had| just| finally)? (?:switched|"
                               r"migrated|moved|changed) (?:my|our|the) (?P<noun>[a-z][\w -]{0,20}"
                               r"?|(?-i:[A-Z]{2,5})) from (?P<old>.+?) to (?P<new>.+)$", _I)
#: "I stepped down from the library board": no longer on it.
_STEPPED_DOWN_FROM = re.compile(r"\b(?P<who>i) (?:stepped down|resigned) from (?:the |my )?"
                                r"(?P<x>[\w -]{2,40}?(?:board|committee|council|team))\b", _I)
#: "I'm a large": a clothing size.
_I_AM_SIZE = re.compile(r"\bi am (?:a |an )?(?P<size>extra small|x-small|small|medium|large|"
                        r"extra large|x-large|xs|xl|xxl)(?=\s*(?:,|$))", _I)
#: "My dad is a smoker": he smokes.
_IS_A_SMOKER = re.compile(r"\b(?P<be>is|am|are) an? (?:heavy |light |social |chain )?smoker\b",
                          _I)
#: "Lunch with Kate is on Thursday": an event named without its article (not a name).
_BARE_EVENT = re.compile(r"^(?P<event>(?:Lunch|Dinner|Breakfast|Brunch|Coffee|Drinks|Meeting|"
                         r"Call|Appointment|Interview|Practice|Class|Session|Party|Rehearsal|"
                         r"Training|Game|Match|Standup|Check-in|Review)) (?=(?:with|at|for) )")
#: "Emma quit the hospital", "I quit Google": no longer works there (not "quit smoking").
_QUIT_WORK = re.compile(r"\b(?:quit|left) (?P<x>(?:(?:the|my|his|her|their) )?(?:(?-i:[A-Z])"
                        r"[\w&.-]*(?: (?-i:[A-Z])[\w&.-]*)*|hospital|bank|company|firm|agency|"
                        r"restaurant|startup|clinic|factory|law firm|newspaper)\b)"
                        r"(?! (?:for|to|in|at|on|with|last|this|yesterday)\b)", _I)
#: "opened a bakery": works at it now.
_OPENED_BUSINESS = re.compile(r"\bopened (?:up )?(?P<det>a|an|her|his|my|their|our) (?:own )?"
                              r"(?P<x>bakery|restaurant|cafe|café|coffee shop|shop|store|business|"
                              r"company|studio|clinic|practice|salon|bar|gym|agency|firm)\b", _I)
#: "Luis and Sara broke up": neither has the other any more.
_THEY_SPLIT = re.compile(rf"^(?P<a>(?-i:{_NAME})) and (?P<b>(?-i:{_NAME})) (?:have |had )?"
                         r"(?:broke up|broken up|split up|separated|divorced|got divorced)\b"
                         r"(?:[^,;]*$|[^,;]*(?P<rest>[,;]\s*(?:and\s+|but\s+|so\s+)?"
                         r"(?:she|he|they)\b.*)$)", _I)
#: "I got an iPhone, ditched the Samsung": a second clause of the same subject.
_COMMA_PARTING = re.compile(r",\s+(?=(?:ditched|dumped|sold|gave away|got rid of|traded in|"
                            r"donated|returned|cancell?ed|dropped)\b)", _I)
#: "My son got contacts, no more glasses": what the clause before ended.
_COMMA_NO_MORE = re.compile(r",\s+(?=no more\b)", _I)
#: "I go to bed around midnight": when I go to bed.
_BEDTIME = re.compile(r"\b(?:i|we) (?:usually |normally |typically |always |have been |'ve been "
                      r"|am |'m )?(?:go|went|get|going|getting) to (?:bed|sleep) "
                      r"(?P<when>(?:at|around|by|before|after|about) .+)$", _I)
#: "My neighbor's golden retriever passed away": the neighbor no longer has one.
_THEIR_UNNAMED_PET_DIED = re.compile(
    rf"^(?P<owner>my (?:{'|'.join(_RELATIVES)})|(?-i:{_NAME}))'s "
    rf"(?P<pet>(?:[a-z]+ )?(?:{'|'.join(sorted(_PETS))})) (?:{_PET_LOST})\b", _I)
#: "I fly United now": my airline.
_I_FLY = re.compile(r"\b(?:i|we) (?:usually |always |now |mostly |only )?fly (?:with )?"
                    r"(?P<x>(?-i:[A-Z][\w]+(?: [A-Z]\w+)?))(?: now)?(?:,.*)?$", _I)
#: "I made the switch to Linux": I switched to it.
_MADE_THE_SWITCH = re.compile(r"\b(?:made|make|making) the (?:switch|move|jump|change)"
                              r"(?: over)? to ", _I)
#: "No pork for me, please": something I keep away from.
_NONE_FOR_ME = re.compile(r"^no (?P<x>[a-z][\w -]{1,30}?) for me\b(?:,?\s*(?:please|thanks?))?",
                          _I)
#: "July 9th is my birthday": the date put first.
_DATE_IS_MY = re.compile(r"^(?P<v>(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
                         r"\.? \d{1,2}(?:st|nd|rd|th)?(?:,? \d{4})?) is (?P<det>my|our|his|her|"
                         r"their|the) (?P<noun>[a-z][a-z -]{1,30}?)$", _I)
#: "Shellfish allergy here", "Vegetarian here", "Nurse here, by the way": who I am, said
#: the way a forum signs it.
_HERE_INTRO = re.compile(r"^(?:(?:a|an)\s+)?(?P<x>(?:[a-z-]+\s+){0,2}?(?P<last>[a-z-]+))"
                         r"\s+here\b(?=\s*(?:[,.!;:]|$))", _I)


def _introduced(match: re.Match[str]) -> str:
    """What a "<X> here" introduction says, when X is an allergy, a diet or a job."""
    said, last = match["x"], match["last"].casefold()
    if last in ("allergy", "intolerance"):
        return f"I have a {said[:1].lower()}{said[1:]}"
    if last in _STATE_FAMILIES["diet"]:
        return f"I am {last}"
    if last in _ROLE_NOUNS:
        return f"I am a {said[:1].lower()}{said[1:]}"
    return match.group(0)


#: A prescriber's start said of the user: "the doctor put me on lisinopril" (takes it).
_PUT_ME_ON = re.compile(r"^(?:my |the |our )?(?:doc|doctor|dr\.? \w+|gp|psychiatrist|"
                        r"cardiologist|physician|endo|endocrinologist|nurse practitioner|np|"
                        r"specialist|pediatrician) (?:has |had |just )?(?:put|started) me on ", _I)


#: "start date got moved up to jan 6", "standup got pushed to 10am": a thing of the
#: speaker's (named with no "my") moved to a new value.
#: "new place is in Pittsburgh", "our new apartment's in Queens": where the user now lives.
_NEW_HOME = re.compile(
    r"^(?:(?:the|my|our)\s+)?new (?:place|apartment|apt|flat|house|home|condo|address)"
    r"(?:'s| is) (?:in|on) (?P<v>[A-Z][\w.'-]*(?:,? [A-Z][\w.'-]*){0,3})", _I)
_GOT_MOVED = re.compile(
    r"^(?:[\w ]{1,25}? (?:emailed|called|texted|said|told me|confirmed|wrote|messaged)"
    r"(?: me)?,\s+)?"  # "hr emailed, start date got moved up to jan 6": who said it goes
    r"(?:(?P<det>the|my|our)\s+)?(?P<rest>(?!(?:i|it|that|this|he|she|they|we|you|everything|"
    r"something|his|her|their|your|its)\b)[a-z][\w-]*(?: [a-z][\w-]*){0,2}? "
    r"(?:got|was|has been|have been|is|are) "
    r"(?:moved|pushed|changed|bumped|rescheduled|shifted)(?: up| back| out| forward)? to "
    r".+?)(?:,?\s+(?:going forward|from now on))?$", _I)
#: "I take 50mg sertraline every morning", "I'm on 500mg of metformin": the drug's dose (so
#: "doc upped my sertraline to 100mg" changes the same thing).
_DOSE_TAKEN = re.compile(r"^(?:i|we)(?P<now> now| currently| still)? (?:take|am taking|am on) "
                         r"(?P<dose>\d+(?:\.\d+)?\s?(?:mg|mcg|µg|ml|iu|units?))(?: of)? "
                         r"(?P<drug>[a-z][\w-]{2,})\b", _I)


def _dose_taken(match: re.Match[str]) -> str:
    now = " now" if (match["now"] or "").strip().casefold() == "now" else ""
    return f"my {match['drug']} is{now} {match['dose']}"


_REWRITES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (_PUT_ME_ON, "I now take "),
    (_DOSE_TAKEN, _dose_taken),
    (_IS_UP, r"\g<x> ends "),
    (_FAN_OF, "like"),
    (_RID_OF, "gave away"),
    (_BORN_AND_RAISED, r"\g<be> born in \g<x> and grew up in \g<x>"),
    (_HAD_TO, _did),
    (_SPLIT_PHRASAL, _joined_phrasal),
    (_LAID_OFF, "no longer works at "),
    (_UNSUBSCRIBED, "cancelled"),
    (_NEW_JOB_AS, "now work as"),
    (_SET_BY_ANOTHER, lambda m: f"{_our(m['det'])} {m['noun']} was {m['verb']} {m['prep']} "
                                f"{m['v']}"),
    (_SWITCHED_KIND, _switched_kind),
    (_SWITCHED_KIND_TO, _switched_kind),
    (_NAMED_FAN, r"like \g<x>"),
    (_FLUENT_IN, "speak"),
    (_MOVED_SCHOOL, _moved_school),
    (_NEW_THING, _new_thing),
    (_OWNS, r"\g<thing> is owned by \g<v>"),
    (_SPLIT_UP, r"\g<x>\g<y> is no longer my partner"),
    (_OFF_MY, r"\g<be> no longer on \g<x>"),
    (_OFF_BARE, r"\g<be> no longer on \g<x>"),
    (_DOWN_TO, _down_to),
    (_EXPIRES, _expires),
    (_FORGET_THE, r"\g<new> instead of \g<old>"),
    (_SEEING, lambda m: f"{_BE_SAID.get(m['be'], m['be'])} dating {m['x']}"),
    (_OUTGREW, r"is no longer allergic to \g<x>"),
    (_KIN_NAME, lambda m: f"my {m['kin'].casefold()}"),
    (_OUR_GROUP_HAS, "we have "),
    (_THEIR_PET_DIED, r"\g<owner> no longer has \g<name>"),
    (_GOT_OFF, r"no longer has \g<x>"),
    (_HAVE_GOT, r"\g<have> "),
    (_PET_IS, r"I have a \g<breed> named \g<name>"),
    (_WENT_BACK, "started "),
    (_GET_UP, _woke),
    (_IT_IS_MY, r"\g<pre> and \g<thing> is \g<rest>"),
    (_HOW_I_TAKE, r"my \g<x> is \g<how>"),
    (_HOURS_OF_SLEEP, r"sleep \g<n> hours"),
    (_TURNED_INTO, r"\g<who> no longer have the \g<x> and \g<who> have \g<y> now"),
    (_STEPPED_DOWN, r"\g<v> is no longer the \g<role>"),
    (_HERE_INTRO, _introduced),
    (_MOVED_ACCOUNTS, r"\g<whose> bank is now \g<v>"),
    (_MADE_THE_SWITCH, "switched to "),
    (_I_FLY, r"my airline is now \g<x>"),
    (_CHANGED_IT_IS, r"\g<np> is now \g<v>"),
    (_BARE_NOUN_SET, _determined),
    (_MIGRATED_FROM_TO, r"\g<who> now use \g<new> for \g<noun> instead of \g<old>"),
    (_MEETS_ON, r"\g<det> \g<noun> is \g<when>"),
    (_BARE_NOUN_ON, _determined_on),
    (_LET_GO, r"no longer have \g<x>"),
    (_LET_LAPSE, lambda m: f"cancelled {m['x'] or m['y']}"),
    (_TOOK_ME_OFF, r"I no longer take \g<x>"),
    (_MOVED_OFF, r"\g<who> no longer work on \g<x>"),
    (_MOVED_ME, _moved_me),
    (_KICKED, r"quit \g<x>"),
    (_I_AM_BLOOD_TYPE, r"my blood type is \g<adv>\g<t>"),
    (_THING_MOVED, _thing_moved),
    (_BACK_TO, r"\g<verb> to"),
    (_PET_WEIGHS, r"my \g<pet>'s weight is \g<v>"),
    (_MOVED_SOMEONE, _someone_moved),
    (_RETIRED_FROM_DOING, "stopped "),
    (_GAVE_NAMED_TO, r"gave away \g<x>"),
    (_STEPPED_DOWN_FROM, r"\g<who> am no longer on the \g<x>"),
    (_I_AM_SIZE, r"my size is \g<size>"),
    (_IS_A_SMOKER, lambda m: "smokes" if m["be"].casefold() == "is" else "smoke"),
    (_BARE_EVENT, lambda m: f"the {m['event'].casefold()} "),
    (_QUIT_WORK, r"no longer works at \g<x>"),
    (_OPENED_BUSINESS, r"now works at \g<det> \g<x>"),
    (_THEY_SPLIT, lambda m: f"{m['a']} no longer has {m['b']}{m['rest'] or ''}"),
    (_COMMA_PARTING, " and "),
    (_COMMA_NO_MORE, ", so "),
    (_BEDTIME, r"my bedtime is \g<when>"),
    (_THEIR_UNNAMED_PET_DIED, r"\g<owner> no longer has the \g<pet>"),
    (_DATE_IS_MY, r"\g<det> \g<noun> is \g<v>"),
)


#: A slot named with no "my" ("fav color is purple", "anniversary is june 2"): typed chat
#: drops the determiner; the noun is one that names an attribute of the speaker.
_BARE_SLOT = re.compile(
    r"^(?!(?:the|my|our|a|an|his|her|their|your|its|this|that)\b)"
    r"(?=(?:(?:new|current|updated|correct) (?:address|number|phone|cell|email|manager|boss|"
    r"doctor|dentist|vet|landlord|employer|company)|favou?rite [a-z]+|"
    r"(?:[a-z]+ ){0,2}(?:anniversary|password|blood type|birthday|"
    r"email(?: address)?|phone number|home address|manager|boss|bedtime|deadline|rent|salary|"
    r"budget|time ?zone|(?:license )?plate(?: number)?|pin|username|handle|zip(?: code)?|"
    r"(?:account|member|policy|id|locker|seat) number|gate code|confirmation (?:code|number)|"
    r"(?:booking|reservation) (?:code|number|reference|ref)|(?:door|wifi|alarm|lock|garage) "
    r"code|code|(?:apple|google|microsoft|student|employee|member|patient|login) id|"
    r"(?:car |auto |home |health |renters |pet |life |dental )?(?:insurance|insurer)))"
    r"\s+(?:is|=)\s|"
    r"(?:lease|contract|membership|warranty|visa|passport) (?:ends|expires|runs out|is up)\b|"
    r"(?:[a-z]+ )?(?:expiry|expiration)(?: date)?\s+(?:is|=)\s|"
    # one's standing appointments: "piano lessons are tuesdays at 5:30"
    r"(?:[a-z]+ ){0,2}(?:lessons?|class(?:es)?|practices?|appointments?|appts?|sessions?|"
    r"therapy|rehearsals?|tutoring|pickup|pick-up|drop-?off)\s+(?:is|are|was|were|got|"
    r"have been|has been)\s+(?:(?:moved|changed|switched|pushed) (?:to )?)?(?:on )?"
    r"(?:every )?(?:mon|tue|wed|thu|fri|sat|sun|weekday|weekend|\d))",
    _I)


def _expand(text: str) -> str:
    text = _CONTRACTION.sub(lambda m: f"{m.group(1)} {_EXPANDED[m.group(2).casefold()]}", text)
    text = _HE_HAS.sub(r"\1 has", _HE_IS.sub(r"\1 is", text))
    text = _NOUN_IS_A.sub(r"\1 is", text)
    text = _NOUN_IS_NAMED.sub(_noun_is_named, text)
    text = _BARE_SLOT.sub("my ", text)  # after "birthday's" became "birthday is"
    for pattern, said_plainly in _REWRITES:
        text = pattern.sub(said_plainly, text)
    as_my = _AS_MY.match(text) or _SET_MY.match(text) or _SET_BARE.match(text)
    if as_my is not None:
        named, det = as_my.groupdict().get("name"), as_my.groupdict().get("det")
        we = (as_my.groupdict().get("who") or "").casefold() == "we"
        whose = f"{named}'s" if named else det or ("our" if we else "my")
        return f"{whose} {as_my['noun']} is now {as_my['v']}"
    where = _WHERE_CLEFT.match(text)
    if where is not None and (where["place"][:1].isupper() or unknown_word(where["place"])):
        rest = re.sub(r"\s+originally$", "", where["rest"], flags=_I)
        joint = " " if rest.casefold().endswith(" from") else " in "  # "where I'm from"
        return f"{rest}{joint}{_unled(where['place'])}"
    cleft = _CLEFT.match(text)
    if cleft is None or verb_lemma(cleft["verb"].split()[-1]) is None:
        return text
    return f"{cleft['who']} {cleft['verb']} {_unled(cleft['thing'], gerund=True)}"


def _noun_is_named(match: re.Match[str]) -> str:
    noun, value = match["noun"].split(), match["v"]
    if any(unknown_word(w) or w.casefold() in STOPWORDS for w in noun):
        return match.group(0)  # "Tom's Honda", "it's Dana"
    titled = value.split()[0].rstrip(".").casefold() in _TITLE_WORDS
    if not (titled or value[:1].isupper() or any(c.isdigit() for c in value)
            or unknown_word(value.split()[0])):
        return match.group(0)  # "my sister's wedding": whose, not what
    return f"{match['det'] or 'my '}{match['noun']} is {value}"



def _unled(phrase: str, *, gerund: bool = False) -> str:
    """``phrase`` without the capital it has only because it led the sentence ("The office",
    and with ``gerund`` "Hiking"); a name keeps its capital."""
    first = phrase.split()[0].casefold()
    if first in STOPWORDS or (gerund and first.endswith("ing")):
        return phrase[:1].lower() + phrase[1:]
    return phrase


#: Shorthand of typed chat, spelled out before reading: "im" (I'm), "dont", "u", "w/",
#: "bc", "pw", "bday".
_SHORTHAND = (
    (re.compile(r"\b(?-i:im)\b"), "I'm"),
    (re.compile(r"\b(?-i:ive)\b"), "I've"),
    (re.compile(r"\b(do|does|did|is|are|was|were|have|has|had|would|could|should|ca|wo)nt\b",
                _I), r"\1n't"),
    (re.compile(r"\b(?-i:u)\b(?!\.)"), "you"),
    (re.compile(r"\b(?-i:ur)\b"), "your"),
    (re.compile(r"\b(that|what|there|who|where|how|it)s\b(?<!\bits)", _I), r"\1's"),
    (re.compile(r"\b(you|they|we)re\b(?<!\bwere)", _I), r"\1're"),
    (re.compile(r"\bw/\s*|(?<=[a-z] )(?-i:w)(?= [a-z])"), "with "),
    (re.compile(r"\b(?:bc|b/c|cuz)\b", _I), "because"),
    (re.compile(r"\bpw\b", _I), "password"),
    # "our neighbor (the one with the doodle) is named kevin": which one, said aside
    (re.compile(r"\s+\((?:the|a|an) [^()]{1,40}\)(?=\s)", _I), ""),
    # "switched gyms!! i'm at crunch now": the switch and what it is now, one sentence
    (re.compile(r"^(?:(?P<who>i|we)(?:'ve| have)? )?(?P<how>(?:just |finally )?)(?P<verb>switched|"
                r"changed) (?P<kind>[a-z]{3,}s)\s*[!.]+\s+(?=(?:i|we)\b)", _I),
     lambda m: f"{m['who'] or 'I'} {m['how']}{m['verb']} {m['kind']}, "),
    # "started drinking coffee again lol, grad school broke me": a laugh ends what it follows
    (re.compile(r"(?<=\w)\s+(?:lol|lmao|rofl|ha(?:ha)+|he(?:he)+)\s*[,;]\s+", _I), ". "),
    # "policy no. is HX-448-2019": a number, not the end of a sentence
    (re.compile(r"\b(?P<of>policy|account|acct|member|membership|order|reference|ref|"
                r"confirmation|case|ticket|room|seat|unit|apt|invoice|claim|tracking|serial|"
                r"badge|employee|patient|student|customer|locker|flight) (?:no\.?|#)(?=\s)",
                _I), r"\g<of> number"),
    (re.compile(r"\bb-?day\b", _I), "birthday"),
    (re.compile(r"\bappt\b", _I), "appointment"),
    (re.compile(r"\bthru\b", _I), "through"),
    # "like 4 cups a day", "like $70/wk": about, not a liking
    (re.compile(r"(?<=\s)(?<!\bi )(?<!\bwe )(?<!\byou )(?<!\bu )(?<!\bthey )(?<!\bhe )"
                r"(?<!\bshe )(?<!\bwould )(?<!\bd )like (?=[$£€]?\d)", _I), "about "),
    # "rn", "atm": currently, not a change (spelled "right now" they would read as one)
    (re.compile(r"\s+(?-i:rn|atm)\b"), ""),
    (re.compile(r"^(?:was )?born (?=on |in )", _I), "I was born "),
    (re.compile(r"\bfave?\b", _I), "favorite"),
)


def spelled_out(text: str) -> str:
    """``text`` with the shorthand of typed chat spelled out (``_SHORTHAND``), and a name
    typed in lower case after "my son", "my dog" … capitalised (``_named_in_lowercase``)."""
    for shorthand, spelled in _SHORTHAND:
        text = shorthand.sub(spelled, text)
    text = _LOWERCASE_NAMED.sub(_named_in_lowercase, text.replace("with  ", "with "))
    text = _BARE_KIN_OWNS.sub(r"my \g<kin>'s ", text)  # "mom's birthday is may 24"
    return _LOWERCASE_IS_MY.sub(_capitalised_name, text)


#: A relative's thing said without "my" at a sentence's start: the speaker's relative.
_BARE_KIN_OWNS = re.compile(rf"(?:^|(?<=[.!?]\s))(?P<kin>{'|'.join(_RELATIVES)})'s\s"
                            r"(?=[a-z]+(?: [a-z]+)? (?:is|are|was|were)\b)")


#: "priya's my partner", "dana is our landlord": a name typed in lower case that opens a
#: sentence saying whom it is to the speaker.
_LOWERCASE_IS_MY = re.compile(rf"(?:^|(?<=[.!?]\s))(?P<title>{_TITLE}\.? )?"
                              r"(?P<name>[a-z][a-z-]{2,})(?:'s|\s+is)\s+(?P<det>my|our)\s")


def _capitalised_name(match: re.Match[str]) -> str:
    name, title = match["name"], match["title"] or ""
    if name in STOPWORDS or name in _FUNCTION_WORDS or not (unknown_word(name) or title):
        return match.group(0)
    title = title[:1].upper() + title[1:]  # "dr. okafor is my dentist": Dr. Okafor
    return f"{title}{name[:1].upper()}{name[1:]} is {match['det']} "  # "'s" before "my": is


#: "my son leo is allergic to peanuts", "our dog biscuit is a beagle": a relation or a pet,
#: then a name typed in lower case.
_LOWERCASE_NAMED = re.compile(
    rf"\b(?P<head>(?i:my|our) (?:(?i:best|older|younger|little|big|baby|twin|step) )?"
    rf"(?i:{'|'.join(_RELATIVES)}|dog|cat|puppy|kitten|pup|bird|parrot|rabbit|bunny|hamster|"
    rf"horse|turtle|lizard|snake|fish)) (?P<name>[a-z][a-z'-]+)\b(?P<next>\s+[a-z']+)?")
#: What follows a name as its clause's verb ("leo is", "biscuit has").
_NAME_VERBS = frozenset("is was has had lives works just got started moved turned".split())
#: Nouns that follow "my dog", "my mom" as part of one thing ("my dog food", "my mom group").
_COMPOUND_HEADS = frozenset("""group chat food bowl toy toys bed walker sitter side life time
stuff thing account phone car house place job work school birthday party wedding""".split())


def _named_in_lowercase(match: re.Match[str]) -> str:
    name, after = match["name"], (match["next"] or "")
    verb = after.strip().casefold() in _NAME_VERBS
    if name in STOPWORDS or name in _RELATIVES or name in _COMPOUND_HEADS or not (
            unknown_word(name) or (verb and len(name) <= 8)):
        return match.group(0)
    return f"{match['head']} {name[:1].upper()}{name[1:]}{after}"


#: A labelled list of one's things: "my accounts: spotify is jlee88, steam is jlee_gamer",
#: "house stuff to remember: furnace filter is 16x25x1, hoa fee is $220/mo".
_LABELLED_LIST = re.compile(r"^(?P<label>[^:,]{2,40}):\s*(?P<items>.+)$")
_LIST_ITEM = re.compile(r"^(?!(?:i|we|he|she|they|it|my|our|his|her|their|this|that|there)\b)"
                        r"(?:the\s+)?(?P<noun>[a-z][\w'-]*(?: [a-z][\w'-]*){0,2}) "
                        r"(?:is|are|=)\s+\S", _I)
_ITEM_BREAK = re.compile(r"\s*[,;]\s*(?:and\s+)?|\s+and\s+")


#: A request, then the speaker's claim after a comma ("can u help me write a cover letter,
#: im a barista at blue bottle"): the claim is read on its own.
_REQUEST_THEN_CLAIM = re.compile(
    r"^(?:(?:hey|hi|ok|okay|so)\W+)?(?:(?:can|could|would|will) (?:you|u)|pls|please|help me)"
    r"\b[^,?—–]{3,80}?(?:,|\s[—–-])\s+(?P<claim>(?:i'm|i am|i've|i have|i|my|we're|we are|we|"
    r"our|got|just got|new|moved|switched|changed|started)\s.+)$", _I)


def _after_request(sentence: str) -> list[str]:
    after = _REQUEST_THEN_CLAIM.match(sentence)
    return [after["claim"]] if after is not None else [sentence]


def _listed(sentence: str) -> list[str]:
    """A labelled list of two or more "noun is value" items as sentences of the speaker's
    own ("my spotify is jlee88"), else the sentence as it is."""
    labelled = _LABELLED_LIST.match(sentence)
    if labelled is None or _CORRECTION.match(sentence) or _REMEMBER.match(sentence):
        return [sentence]
    items = [i.strip(" .!") for i in _ITEM_BREAK.split(labelled["items"]) if i.strip(" .!")]
    if len(items) >= 2 and all(_LIST_ITEM.match(i) for i in items):
        return [f"my {_LIST_ITEM_DET.sub('', i)}" for i in items]
    # "quick intake for the meal plan: I'm 34, 5'6": the label asks, the rest claims
    said = labelled["items"].strip()
    if _SPEAKER_FIRST.match(said):
        return [said]
    owned = [_owned_item(i) for i in items] if not _OTHERS_LABEL.search(labelled["label"]) \
        else []
    label = labelled["label"].strip().casefold()
    if owned and owned[0] is None and label in _ATTRIBUTE_NOUNS:
        owned[0] = f"my {label} is {items[0]}"  # "name: Priya Raman, …, email …": the first
    if sum(1 for i in owned if i is not None) < 2:
        return [sentence]
    # "for the intake form: dob 4/11/1988, height 5'7, allergic to latex, pcp is dr. ramos"
    return [own if own is not None else item for item, own in zip(items, owned, strict=True)]


_LIST_ITEM_DET = re.compile(r"^the\s+", _I)
#: An item of a labelled list named by a noun and given its value with no verb ("dob
#: 4/11/1988", "height 5'7", "salary 96k", "start date jan 8", "plate 8XYT204").
_NOUN_VALUE_ITEM = re.compile(
    r"^(?!(?:i|we|he|she|they|it|my|our|his|her|their|this|that|there|the|a|an|and|or|"
    r"but|so|in|on|at|for|to|from|with)\b)(?P<noun>[a-z][\w'-]*(?: [a-z][\w'-]*){0,2}?) "
    r"(?P<value>(?:\$?\d[\w'./:$-]*|[\w.+-]+@[\w-]+\.[\w.-]+|"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)"
    r"[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?))$", _I)
#: A label that names someone else's things ("Tom's details:", "her meds:").
_OTHERS_LABEL = re.compile(r"\b(?:(?!(?:my|our)\b)[a-z]+'s|his|her|their)\b", _I)


def _owned_item(item: str) -> str | None:
    """An item of a labelled list as the speaker's own claim ("my height is 5'7", "I am
    allergic to latex"), or None when it is not one of those shapes."""
    if _SPEAKER_FIRST.match(item):
        return item
    if _LIST_ITEM.match(item):
        return f"my {_LIST_ITEM_DET.sub('', item)}"
    if _STATE_ITEM.match(item):  # "based in newark", "fluent in portuguese"
        return f"I am {item}"
    if _DOING_ITEM.match(item):  # "have my PMP", "speak french"
        return f"I {item}"
    if _WEIGHT_ITEM.match(item):  # "172 lbs", "5'9"
        return f"my weight is {item}"
    if _HEIGHT_ITEM.match(item):
        return f"my height is {item}"
    pair = _NOUN_VALUE_ITEM.match(item)
    return f"my {pair['noun']} is {pair['value']}" if pair is not None else None


#: A bare weight or height in the speaker's own list ("5'9, 172 lbs, goal is 160").
_WEIGHT_ITEM = re.compile(r"^\d{2,3}(?:\.\d)?\s?(?:lbs?|pounds|kg|kilos|kilograms)$", _I)
_HEIGHT_ITEM = re.compile(r"^(?:[4-7]'\s?\d{1,2}(?:\.\d)?\"?|[4-7] ?ft(?: ?\d{1,2} ?in)?|"
                          r"1\.\d{2} ?m|1\d{2} ?cm)$", _I)
_SPEAKER_FIRST = re.compile(r"^(?:i|i'm|im|i've|my|we|we're|our)\b", _I)
#: An item of the speaker's own list that says what they are ("based in newark", "fluent in
#: portuguese", "allergic to latex", "vegetarian") or do ("have my PMP", "speak french").
_STATE_ITEM = re.compile(r"^(?:(?:allergic|intolerant) to|(?:based|located|living|born) in|"
                         r"fluent in|certified in|married|single|divorced|engaged|vegan|"
                         r"vegetarian|pregnant|retired|left-handed|right-handed)\b", _I)
_DOING_ITEM = re.compile(r"^(?:have|speak|work|live|drive|own|use|play|take)\s", _I)
#: "I'm a sophomore at ohio state": the year, and where one studies.
_STUDENT_AT = re.compile(r"^(?P<who>i am|i'm|im) (?:a |an )?(?P<year>freshman|sophomore|junior|"
                         r"senior|first-year|second-year|third-year|final-year|grad student|"
                         r"phd student|student) at (?P<school>.+)$", _I)


_STUDYING = re.compile(r"\s+(?:studying|majoring in|doing)\s+[^,]+", _I)


def _student_at(sentence: str) -> list[str]:
    student = _STUDENT_AT.match(sentence)
    if student is None:
        return [sentence]
    school, _, rest = student["school"].partition(",")
    school = _STUDYING.sub("", school)  # "UCF studying bio": the school
    year = f"I am a {student['year']}"
    return [year, f"I study at {school.strip()}{',' + rest if rest else ''}"]


#: People who hold a role for the speaker, named beside it in passing ("reschedule with my
#: dentist dr. chu", "kevin (my manager) wants the deck"): a claim of who holds it.
_SERVICE_ROLES = ("manager|boss|supervisor|dentist|doctor|gp|therapist|psychiatrist|"
                  "counselor|counsellor|vet|landlord|landlady|teacher|tutor|coach|trainer|"
                  "accountant|lawyer|mechanic|hairdresser|barber|stylist|pediatrician|"
                  "physio|physiotherapist|dermatologist|optometrist|orthodontist|realtor|"
                  "nanny|babysitter|advisor|adviser|mentor|cardiologist|obgyn|midwife|"
                  "team lead|tech lead|team leader|line manager|allergist|surgeon|"
                  "psychologist|chiropractor|nutritionist|dietitian|pharmacist|principal|"
                  "instructor|agent|broker|contractor|plumber|electrician|gardener|"
                  "housekeeper|cleaner|caregiver|nurse|neurologist|oncologist|urologist|"
                  "ophthalmologist|podiatrist|gynecologist|endocrinologist|psychotherapist")
_PERSON = rf"(?:{_TITLE}\.? [a-z][a-z'-]+|(?-i:[A-Z][a-z'-]+)|[a-z][a-z'-]{{2,}})"
_ROLE_BEFORE_NAME = re.compile(
    rf"\b(?P<det>my|our) (?:(?P<kin>{'|'.join(_RELATIVES)})'s )?(?P<role>{_SERVICE_ROLES}) "
    rf"(?P<v>{_PERSON})(?=$|[\s,.!?;:)])", _I)
_NAME_BEFORE_ROLE = re.compile(
    rf"(?:^|\s)(?P<v>{_PERSON}) \((?P<det>my|our) (?:(?P<kin>{'|'.join(_RELATIVES)})'s )?"
    rf"(?P<role>{_SERVICE_ROLES})\)", _I)


#: Words the lexicon has no lemma for that are no name either.
_FUNCTION_WORDS = frozenset("""for about and but with from into onto over after before since
because who whom whose which that when while was were has had will can could would should did
does than then also too yet nor not never just again here there""".split())


def _named_beside_role(clause: str) -> list[str]:
    """"my dentist dr. chu" and "kevin (my manager)" said in passing, as "my dentist is dr.
    chu" (a lower-case name only when the lexicon does not know the word)."""
    said = []
    for pattern in (_ROLE_BEFORE_NAME, _NAME_BEFORE_ROLE):
        for match in pattern.finditer(clause):
            name = match["v"]
            titled = " " in name
            if not titled and not name[:1].isupper() and not unknown_word(name):
                continue
            if not titled and (_not_a_name(name) or name.casefold() in _FUNCTION_WORDS):
                continue
            whose = f"{match['det']} {match['kin']}'s" if match["kin"] else match["det"]
            said.append(f"{whose} {match['role']} is {name}")
    return said


def read_text(text: str, role: str = "user") -> list[Statement]:
    """Every claim in ``text`` as said by ``role`` ("user" or "assistant"), in order."""
    text = spelled_out(text)
    found: list[Statement] = []
    said = ""  # the clause before, for "it"
    for sentence in (s for whole in sentences(text) for listed in _listed(whole)
                     for claim in _after_request(listed) for s in _student_at(claim)):
        opened = len(found)  # the claims of this sentence start here
        sentence = _NONE_FOR_ME.sub(r"I avoid \g<x>", sentence)  # before "no" is a filler
        if is_chatter(sentence):
            found.extend(_said_before_asking(sentence, role, found))
            found.extend(s for named in _named_beside_role(sentence)
                         for s in read_clause(named, read_manner(sentence)[1], role, found))
            continue
        body, manner = read_manner(sentence)
        if not body or is_chatter(body):
            continue
        body = _ALLERGIC_ASIDE.sub(r", I am \g<how>allergic", body)
        for clause in clauses(_expand(_without_asides(body))):  # "…, just so you know"
            clause = _bought_instead(_it_parted_with(_it_named(clause, said), said),
                                     found[opened:])
            for pattern, said_plainly in _CLAUSE_REWRITES:
                clause = pattern.sub(said_plainly, clause)
            clause = _he_she_named(clause, found)
            if _BARE_ALLERGIC.match(clause) and found and found[-1].value:
                clause = f"{clause} to {found[-1].value}"  # "can't eat X, I'm allergic"
            said = clause
            read = read_clause(clause, manner, role, found)
            slots = {s.slot for s in read if s.attribute}
            # "my manager kevin wants the deck by friday": who the manager is, said in passing
            read += [s for named in _named_beside_role(clause)
                     for s in read_clause(named, manner, role, found)
                     if s.attribute and s.slot not in slots]
            found.extend(_resolved(s, found) for s in read)
    return list(_distinct([s for s in found if not _points_nowhere(s)]))


#: Relations that say a gender: "she" never stands for "my brother Tom" (here and in
#: ``domain/pronouns.py``, which finds whom a pronoun read alone stands for).
HE_RELATIONS = frozenset("""son brother father dad husband boyfriend uncle nephew grandfather
grandpa stepson stepfather stepbrother fiance""".split())
SHE_RELATIONS = frozenset("""daughter sister mother mom mum wife girlfriend aunt niece
grandmother grandma stepdaughter stepmother stepsister fiancee""".split())


def _he_she_named(clause: str, before: list[Statement]) -> str:
    """"My best friend Marcus lives in Chicago. He works as a firefighter": a clause opening
    with "he" or "she" is about the one person the same text named before it (none, or two:
    the pronoun stays, and the pipeline's ``domain/pronouns.py`` may still find whom)."""
    pronoun = _HE_SHE.match(clause)
    if pronoun is None:
        return clause
    people = {s.holder: s.holder_name for s in before if s.holder.startswith("person:")}
    if len(people) != 1:
        return clause
    [name] = people.values()
    said = {w.casefold() for w in name.split()}
    other = SHE_RELATIONS if pronoun.group(0).strip().casefold() == "he" else HE_RELATIONS
    if said & other:
        return clause
    named = f"my {name[len('User’s '):]}" if name.startswith(("User's ", "User’s ")) else name
    return f"{named} {clause[pronoun.end():]}"


#: "Raj bought a Rivian" after "Raj sold his Tesla" in the same sentence.
_BOUGHT = re.compile(r"^(?P<who>.+?) (?:bought|got|purchased|picked up) (?P<x>(?:a|an|another|"
                     r"the|his|her|their|my|our|a new|a used) .+)$", _I)


def _bought_instead(clause: str, said: list[Statement]) -> str:
    """"Dad sold his truck and bought a sedan": what the holder bought or got in a sentence
    that parted with something is what they have now (a purchase alone stays an event, and
    a named person's other verbs stay mentions: ``_NAMED_HABITS``)."""
    bought = _BOUGHT.match(clause)
    if bought is None or not any(s.negated and s.attribute == "has" for s in said):
        return clause
    have = "have" if bought["who"].casefold() in ("i", "we", "you", "they") else "has"
    return f"{bought['who']} {have} {bought['x']} now"


#: "I'm allergic" with nothing after it: to what the clause before named.
_BARE_ALLERGIC = re.compile(r"^i am (?:very |severely |deathly )?allergic$", _I)
#: "I can't have shellfish": what the user must not take is a restriction they keep, not a
#: habit or a possession denied (which would retract "User is allergic to shellfish").
_CANT_TAKE = re.compile(r"^(?P<who>i|we) (?:can't|cannot|can not|shouldn't|should not|must not|"
                        r"mustn't) (?:have|eat|drink|take|tolerate|digest) (?P<x>(?!(?:a|an|the|"
                        r"my|our|any|that|this|it|them|much|more|too)\b)[a-z][\w -]{1,30}?)"
                        r"(?=$|[,.;!]|\s+(?:anymore|any more|because|since|bc|due)\b)", _I)
#: "not vegetarian anymore", "no longer on the on-call rotation": said of oneself, the
#: subject left out.
_NOT_ANYMORE = re.compile(r"^(?:not\s+(?P<x>(?:a |an |on |in |at |with )?[a-z][\w -]{1,40}?)"
                          r"\s+any\s?more|no longer\s+(?P<y>(?:a |an |on |in |at |with )?"
                          r"[a-z][\w -]{1,40}?))\W*(?:(?:finally|tho|though|lol|yay)\W*)?$",
                          _I)
#: "wifi password at home: mango2291", "door code for the office - 4471": a labelled value of
#: a place's thing, as "home wifi password: mango2291".
_PLACE_LABEL = re.compile(r"^(?P<noun>(?:(?!\b(?:at|for)\b)[a-z][\w-]*\s?){1,3}?) (?:at|for) "
                          r"(?:the |my |our )?(?P<place>home|work|the office|office|cabin|"
                          r"house|apartment|flat|school|gym|studio|garage)"
                          r"(?P<sep>\s*(?::|\s-)\s*)(?=\S)", _I)
#: "weighed in this morning at 166 lbs": one's weight now.
_WEIGHED_IN = re.compile(r"^(?:i\s+)?(?:just\s+)?weighed(?:\s+myself)?(?:\s+in)?"
                         r"(?:\s+(?:this morning|today|yesterday|tonight|last night))?"
                         r"\s+(?:at|in at)\s+(?P<v>\d[\d.,]*\s?(?:lbs?|pounds|kg|kilos))\b.*$", _I)
_GAVE_UP_ON = re.compile(r"\b(?P<v>give|gave|giving|given|gives) up on\b", _I)
#: What one clause says, said the plain way the clause readers know, in this order: these
#: read a clause on its own (``_REWRITES`` read the whole text before it is split).
_CLAUSE_REWRITES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (_GAVE_UP_ON, r"\g<v> up"),
    (_WEIGHED_IN, r"my weight is now \g<v>"),
    (_BARE_SLOT, "my "),  # "looked at the email again, code is QZ7N4P": a clause of its own
    (_PLACE_LABEL, r"\g<place> \g<noun>\g<sep>"),
    (_CANT_TAKE, r"\g<who> avoid \g<x>"),
    (_SWITCHED_IN_MY, r"\g<det> \g<noun> is now \g<v>"),
    (_REPLACED_WITH, r"my \g<noun> is now \g<v>"),
    (_THROUGH, r"\g<np> is "),
    (_INSURED_WITH, r"my \g<noun> is \g<v>"),
    (_INSURED_FOR, lambda m: f"my {_INSURED_KIND.get(m['what'].casefold(), m['what'])} "
                             f"insurance is {m['v']}"),
    (_NOT_ANYMORE, lambda m: f"I'm not {m['x'] or m['y']} anymore"),
    (_GOT_MOVED, lambda m: f"{m['det'] or 'my'} {m['rest']}"),  # read by _MY_ATTRIBUTE
    (_NEW_HOME, r"I live in \g<v>"),
)
#: "…, allergic" at the end of a clause: the user's own allergy, said as an aside.
_ALLERGIC_ASIDE = re.compile(r",\s*(?:i'm |i am |im )?(?P<how>very |severely |deathly )?"
                             r"allergic(?=\s*[.!]*$)", _I)
#: "it lands at 8 pm", "it's red": a clause whose subject only points back.
_IT_CLAUSE = re.compile(r"^it(?:'s|\s+(?P<verb>[a-z]+))\b", _I)


def _it_named(clause: str, before: str) -> str:
    """"My flight lands at 6 pm. Sorry, it lands at 8 pm.": "it" is the thing (my/our/the
    noun) before the same verb in the clause before (it is left as it is otherwise)."""
    it = _IT_CLAUSE.match(clause)
    if it is None or not before:
        return clause
    verb = it["verb"] or "is"
    said = _REASON_TAIL.sub("", _expand(before).strip())
    named = re.match(rf"^(?P<np>(?:my|our|the) (?:[a-z-]+ ){{0,2}}?[a-z-]+) {verb}\b", said, _I)
    if named is None and verb == "is":  # "I changed my number. It's 555-0199 now."
        named = _CHANGED_MY.match(said)
    if named is None:
        return clause
    thing = named["np"] if named["np"] else f"my {named['noun']}"
    return f"{thing} {verb}{clause[it.end():]}"


#: "..., I sold it", "traded it in for a RAV4": a parting whose object is "it".
_PARTED_WITH_IT = re.compile(r"^(?P<lead>(?:i|we) (?:sold|gave away|got rid of|donated|returned|"
                             r"traded in|threw out|threw away|gave up)) it\b|"
                             r"^(?P<who>i|we) (?P<verb>traded|gave|threw) it (?P<particle>in|away|"
                             r"out)\b", _I)
#: What a clause said one had, when not said as "my X": "I drive a 2015 Civic".
_HAD_OBJECT = re.compile(r"^(?:i|we) (?:have|had|own|owned|drive|drove|ride|rode|use|used|got|"
                         r"bought|keep|kept) (?:a|an|the|this|that) (?P<x>(?:[\w-]+ ){0,2}[\w-]+)$",
                         _I)


def parts_with_it(text: str) -> bool:
    """The text opens with a parting whose object is "it" ("Traded it in for a RAV4", "Sold
    it last week"): it means what it parted with only read after the turn before it."""
    lead = next(iter(sentences(text)), "")
    body, _ = read_manner(lead)
    return _PARTED_WITH_IT.match(_SUBJECTLESS.sub("I ", _expand(body))) is not None


def _it_parted_with(clause: str, before: str) -> str:
    """"I haven't touched my guitar in years, I sold it": what was sold is the last thing
    the clause before named as the holder's (my/our X, or what it said one had: "I drive a
    2015 Civic")."""
    said = _SUBJECTLESS.sub("I ", clause)  # "Traded it in for a RAV4"
    parted = _PARTED_WITH_IT.match(said)
    if parted is None or not before:
        return clause
    named = re.findall(r"\b(?:my|our) ((?:[a-z-]+ )?[a-z-]+)\b", before, _I)
    had = _HAD_OBJECT.match(_TRAIL.sub("", before.strip()))
    if not named and had is not None:
        named = [had["x"]]
    thing = [w for w in named[-1].split() if w.casefold() not in STOPWORDS] if named else []
    if not thing:
        return clause
    lead = parted["lead"] or f"{parted['who']} {parted['verb']} {parted['particle']}"
    owner = "our" if lead.casefold().startswith("we") else "my"
    return f"{lead} {owner} {' '.join(thing)}{said[parted.end():]}"


#: "I changed my number": the thing changed, which "it's ..." after it names.
_CHANGED_MY = re.compile(_CHANGED_THING + "$", _I)


def opens_with_bare_correction(text: str) -> bool:
    """The text's first sentence only corrects a value said before it ("Oh wait, I mean
    Porto.", "Sorry, Wednesday.", "Sorry, it's at 8."): it means nothing read alone."""
    lead = next(iter(sentences(text)), "")
    body, manner = read_manner(lead)
    body = re.split(r"\s+[—–]\s+|;\s*", body, maxsplit=1)[0]  # "9 — we hired someone"
    # "Evan, not Ethan"; "4 cats now that we adopted Pepper"
    body = _NOT_TAIL.sub("", _TRAIL.sub("", _REASON_TAIL.sub("", _TRAIL.sub("", body))))
    if manner.change and _IT_CLAUSE.match(body) and len(body.split()) <= POINTING_WORDS:
        return True  # "Sorry, it lands at 8 pm.": "it" is what was said before
    first, comma, _ = body.partition(",")
    if manner.change and comma and len(first.split()) <= FRAGMENT_WORDS \
            and any(kind.fullmatch(first.strip()) for kind in _VALUE_KINDS):
        return True  # "I mean 11, he just had his birthday."
    return manner.change and len(body.split()) <= FRAGMENT_WORDS and _bare_value(body)


def _said_before_asking(sentence: str, role: str, before: list[Statement]) -> list[Statement]:
    """"I just moved to Queens, any sushi there?": the claim said before a question in the
    same sentence (only claims of a value: "I was wondering, ..." is no claim)."""
    head, comma, _ = sentence.rstrip().rpartition(",")
    if not comma or not sentence.rstrip().endswith("?") or is_chatter(head):
        return []
    body, manner = read_manner(head)
    return [_resolved(s, before) for clause in clauses(_expand(body))
            for s in read_clause(clause, manner, role, before) if s.attribute and s.value]


def _points_nowhere(statement: Statement) -> bool:
    """"I moved there" with no place named before it: no claim."""
    return statement.value is not None and statement.value.casefold() in ("there", "here")


_PLACE_ATTRIBUTES = frozenset({"lives_in", "located_in", "visited", "works_at", "born_in"})


_IN_PLACE = re.compile(r"\bin (?P<place>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)")


def _resolved(statement: Statement, before: list[Statement]) -> Statement:
    """"..., so I live there now": "there" is the place named last in the same text."""
    if statement.value is None or statement.value.casefold() not in ("there", "here") \
            or statement.attribute not in _PLACE_ATTRIBUTES:
        return statement
    place = next((s.value for s in reversed(before) if s.value
                  and s.attribute in _PLACE_ATTRIBUTES and s.value[:1].isupper()), None)
    if place is None:  # "we bought a house in Boulder and moved there"
        place = next((m["place"] for s in reversed(before) if s.value
                      and (m := _IN_PLACE.search(s.value))), None)
    if place is None:
        return statement
    content = re.sub(r"\b(?:there|here)\b", place, statement.content, count=1)
    return replace(statement, value=place, content=content,
                   entities=tuple(dict.fromkeys((*statement.entities, place))))


def _distinct(statements: list[Statement]) -> list[Statement]:
    """One statement per claim: a text that says the same thing twice says it once."""
    seen: dict[tuple[str, str | None, str | None, bool], int] = {}
    kept: list[Statement] = []
    for statement in statements:
        key = (statement.holder, statement.attribute,
               (statement.value or statement.content).casefold(), statement.negated)
        if key in seen:
            index = seen[key]
            kept[index] = replace(kept[index], explicit_change=kept[index].explicit_change
                                  or statement.explicit_change)
            continue
        seen[key] = len(kept)
        kept.append(statement)
    return kept


def read_clause(clause: str, manner: _Manner, role: str,
                before: list[Statement] | None = None) -> list[Statement]:
    """The claims of one clause; ``before`` are the claims read earlier in the same text, the
    target of a bare correction ("sorry, I meant Porto")."""
    gone = _NO_MORE.match(_TRAIL.sub("", clause.strip()))
    if gone is not None and role == "user":  # "..., so no more glasses"
        return [_no_longer_had(_phrase(gone["x"]), manner)]
    clause = _TRAIL.sub("", _FILLER.sub("", _TAG_QUESTION.sub("", clause.strip())))
    clause = _RATHER.sub(r"prefer \g<new> over \g<old>",
                         _REASON_TAIL.sub("", _without_asides(clause)))
    clause = _PROMOTED.sub("got promoted to", clause)  # a promotion holds now, said in the past
    clause = _PUT_ON_SHIFT.sub("got moved to", clause)  # and so does a move to another shift
    clause = _NEW_JOB.sub("started working at ", clause)
    if is_chatter(clause):
        return []
    not_paren = _NOT_PAREN.search(clause)
    if not_paren is not None:  # "code is QZ7N4P (N not M)": what it is not, in brackets
        clause, manner = _NOT_PAREN.sub("", clause), replace(manner, change=True)
    not_tail = _NOT_TAIL.search(clause)
    if not_tail is not None and len(clause[:not_tail.start()].split()) >= 1:
        clause, manner = clause[:not_tail.start()], replace(manner, change=True)
    manner = replace(manner, change=manner.change or _CHANGE_TAIL.search(clause) is not None,
                     hedged=manner.hedged or _HEDGE_INSIDE.search(clause) is not None)
    head = _TIME_HEAD.match(clause)
    if head is not None and len(clause) > head.end():
        past = _PAST_TIME.search(head.group(0)) is not None
        starts = _STARTING.search(head.group(0)) is not None
        clause, manner = clause[head.end():], replace(manner, past=manner.past or past,
                                                      change=manner.change or starts)
        if _DOING.match(clause):  # "Now reading 'Dune'": what the user is doing now
            clause, manner = f"I am {clause}", replace(manner, change=True)
    clause = _BARE_SLIPPED.sub(_bare_slipped, clause)  # after the time it starts at
    clause = _SUBJECTLESS.sub("I ", clause)
    clause = _BARE_MEASURE.sub("I am ", clause)
    lets = _LETS.match(clause)
    if lets is not None:
        return _decision(lets["v"], manner)
    reach = _REACH_ME.match(_untimed(clause))
    if reach is not None and role == "user":  # "Please use sam@newmail.com from now on"
        attribute = "email" if "@" in reach["v"] else "phone"
        return [_attribute_statement(_Holder(USER, "User"), attribute, reach["v"],
                                     replace(manner, change=True))]
    reply = _REPLY_IN.match(_untimed(clause))
    if reply is not None and role == "user" and reply["v"].casefold() in _LANGUAGES:
        return [_attribute_statement(_Holder(USER, "User"), "reply_language", reply["v"],
                                     replace(manner, change=True))]
    if manner.change and before and "'s " in clause:  # "I meant Toni's Garage": a name
        corrected = _fragment(clause, manner, before)
        if corrected:
            return corrected
    nouned = _noun_sentence(clause, manner, role) or _timed_event(clause, manner, role)
    if nouned is not None:
        return nouned
    match = _HOLDER.match(clause)
    if match is None or (match.group("name") and _not_a_name(match.group("name"))):
        return _fragment(clause, manner, before) or _mention(clause, manner, role)
    holder = _holder(match, role)
    if holder is None:
        return []
    verb = read_verb(clause[match.end():].strip(" ,"), manner)
    if verb is None:
        return _fragment(clause, manner, before) or (
            _mention(clause, manner, role) if holder.key == USER else [])
    if match.group("name") and verb.lemma in _DYING and role == "user":
        return [*_mention(clause, manner, role), _no_longer_had(holder.name, manner)]
    if verb.lemma in _DYING and holder.key.startswith("person:"):  # "my grandpa passed away"
        died = _attribute_statement(holder, "life_status", "passed away",
                                    replace(manner, change=True, past=False))
        return [replace(died, content=f"{holder.name} passed away")]
    left = _LEFT_HOME.match(f"{verb.lemma} {_untimed(verb.rest)}")
    if left is not None:
        where = left["place"] and _verb_statements(
            holder, _Verb("live", f"in {left['place']}", replace(manner, change=True)), role)
        return [_moved_out(holder, clause, manner), *(where or ())]
    if match.group("name") and verb.lemma not in _VERB_CLASSES and verb.lemma != "be" \
            and verb.lemma not in _STOPPING and verb.lemma not in _NAMED_HABITS \
            and not _names_school(verb) \
            and not _names_new_state(verb):
        # "Clara quit smoking" reads as "no longer smokes", "Ana attends X Academy" as her
        # school; other verbs of a named person stay a mention
        return _mention(clause, manner, role)
    return _verb_statements(holder, verb, role)


def _names_new_state(verb: _Verb) -> bool:
    """"Ana got married", "Carlos became a professor": a named person's new state or role
    (other verbs of a named person stay a mention)."""
    if verb.lemma not in _INTO_STATE:
        return False
    claim = classify(verb)
    return claim is not None and (claim.attribute in _STATE_FAMILIES
                                  or claim.attribute == "job_title")


def _names_school(verb: _Verb) -> bool:
    """"Ana attends X Academy", "Leo started fourth grade": where or in which year she
    studies."""
    rest = _untimed(verb.rest)
    if verb.lemma not in _SCHOOL_VERBS:
        return False
    transferred = verb.lemma == "transfer" and _TRANSFERRED.match(rest) is not None
    return transferred or _SCHOOL.match(rest) is not None or _GRADE.match(rest) is not None


#: Habits a named person's verb says as such ("Paul eats cheese again", "Ana wears
#: glasses"): other verbs of a named person stay a mention ("Gina went to the store").
_NAMED_HABITS = frozenset({"eat", "drink", "smoke", "vape", "wear", "drive", "ride", "own"})


def _verb_statements(holder: _Holder, verb: _Verb, role: str) -> list[Statement]:
    if verb.lemma in ("decide", "agree") and holder.key in (USER, PROJECT):
        return _decision(re.sub(r"^(?:to|on|that)\s+", "", verb.rest), verb.manner)
    gained: list[Statement] = []
    if verb.lemma in _STOPPING:
        gained = _gained(holder, verb, role)
        stopped = _stopped(verb)
        if stopped is not None:
            verb = stopped
        if verb.lemma == "have" and not _untimed(verb.rest).strip():
            return gained  # "quit in January": what was given up is not said here
    elif verb.lemma in ("start", "begin") and not verb.manner.negated:
        verb = _started(verb) or verb
    elif verb.lemma in ("switch", "move", "change", "go") and not verb.manner.negated:
        verb = _switched_to_doing(verb) or verb
    if verb.lemma in _SET_VERBS:
        target = _ACTIVE_SET.match(verb.rest)
        # "we moved standup to 10:15": with no determiner, only a move in time
        if target is not None and (target["det"] or _WHEN.match(target["v"])):
            to_person = re.fullmatch(rf"(?:my |our )?(?:{_NAME}(?: {_NAME})?|"
                                     rf"(?i:{'|'.join(_RELATIVES)}))", target["v"])
            how = "was handed over to" if verb.lemma in ("hand over", "hand", "give") or (
                verb.lemma == "reassign" and to_person) \
                else "is now" if verb.lemma in ("rename", "reassign") else "changed to"
            det = _owner_phrase(holder, target["det"])
            clause = f"{det} {target['noun']} {how} {target['v']}"
            found = _noun_sentence(clause, replace(verb.manner, change=True, past=False), role)
            if found and verb.lemma == "give" and det == "my" and holder.key == USER:
                # "I gave my PlayStation to my nephew": no longer the user's
                return [*found, _no_longer_had(target["noun"], verb.manner)]
            if found:
                return found
    schedule = _SCHEDULE.search(verb.rest) if verb.lemma == "work" else None
    if schedule is not None:  # "I work part-time at the library": the hours, and where
        verb = replace(verb, rest=_SCHEDULE.sub("", verb.rest).strip())
        gained = [*gained, _attribute_statement(holder, "work_schedule",
                                                f"{schedule['s'].casefold()}-time", verb.manner)]
    claim = classify(verb)
    if claim is not None and verb.manner.progressive and claim.attribute in _NOW_DOING:
        claim = replace(claim, attribute=_NOW_DOING[claim.attribute])  # "I'm reading Dune"
    if claim is None:
        return gained
    said = [s for part in _job_parts(claim) for s in _claim_statements(holder, verb, part)]
    return [*said, *_weekly(holder, verb, said), *gained]


#: A weekly schedule: "on Saturdays", "every other Tuesday", "on weekends".
_WEEKLY = re.compile(rf"\b(?:on|every) (?:other )?{_DAYS}(?: and {_DAYS})?\b|"
                     r"\bon (?:the )?(?:weekends|weekdays)\b|"
                     r"\bin the (?:early |late )?(?:mornings|evenings|afternoons)\b|"
                     r"\b(?:every|each) (?:morning|evening|afternoon|night)\b|"
                     r"\b(?:before|after) work\b", _I)


def _weekly(holder: _Holder, verb: _Verb, said: list[Statement]) -> list[Statement]:
    """"I tutor on Saturdays": when a habit happens, a slot of its own (one schedule at a
    time: "I tutor on Sundays now" moves it; the habit stays one)."""
    when = _WEEKLY.search(verb.rest)
    if when is None or len(said) != 1 or verb.manner.past or verb.manner.future \
            or verb.manner.negated:
        return []
    habit = said[0]
    if habit.attribute is None or habit.value is None or is_single_valued(habit.attribute) \
            or when.group(0).casefold() in habit.content.casefold():
        return []  # "volunteers at the food bank every other Friday": said in the habit
    activity = slug(habit.value if habit.attribute == "does" else
                    f"{habit.attribute} {habit.value}", limit=4)
    content = f"{habit.content.rstrip('.')} {when.group(0)}"
    return [_statement(holder, f"schedule_of_{activity}", when.group(0), content,
                       verb.manner, verb.lemma, time_is_value=True)]


#: "traded in the Civic for a Mazda", "replaced my Kindle with a Kobo": what came instead.
_IN_EXCHANGE = re.compile(r"^.+?\s+(?:for|with)\s+(?P<new>(?:an?|another|the|my|our)\s+.+|"
                          r"[A-Z0-9].*)$")


def _gained(holder: _Holder, verb: _Verb, role: str) -> list[Statement]:
    """The thing a trade or replacement brought: the holder has it now."""
    if verb.lemma not in ("trade in", "trade", "replace", "swap", "exchange"):
        return []
    found = _IN_EXCHANGE.match(verb.rest)
    if found is None:
        return []
    now = replace(verb.manner, negated=False, change=True, past=False)
    return _verb_statements(holder, _Verb("have", found["new"], now), role)


#: What one works at that is no employer: a desk, a table, a computer.
_WORK_FURNITURE = re.compile(r"^(?:a|an|my|the)\s+(?:[a-z-]+\s+)?(?:desk|table|computer|laptop|"
                             r"workstation|keyboard|counter|bench)$", _I)


def _job_parts(claim: _Claim) -> list[_Claim]:
    """"works at Acme as a nurse" / "is a nurse at Acme": an employer and a job title."""
    if claim.attribute == "works_at" and _WORK_FURNITURE.match(claim.phrase):
        return [replace(claim, attribute="uses", verb="use")]  # "I work at a standing desk"
    if claim.attribute == "works_at":
        parts = re.split(r"\s+as\s+", claim.phrase, maxsplit=1)
        if len(parts) == 2:
            return [replace(claim, phrase=parts[0]), _Claim("job_title", parts[1])]
    if claim.attribute == "shift":  # "works nights at St. Mary's": where, too
        parts = re.split(r"\s+(?:at|for)\s+(?=[A-Z0-9])", claim.phrase, maxsplit=1)
        if len(parts) == 2:
            return [replace(claim, phrase=parts[0]), _Claim("works_at", parts[1])]
    if claim.attribute == "job_title":
        parts = re.split(r"\s+(?:at|for|with)\s+(?=[A-Z0-9])", claim.phrase, maxsplit=1)
        if len(parts) == 2:
            return [replace(claim, phrase=parts[0]), _Claim("works_at", parts[1])]
    return [claim]


#: What one starts doing and then does: "started eating meat", "began working at Acme".
_HABITS = frozenset("""eat drink smoke vape work live play use wear drive ride run swim cycle bike
    learn study teach date attend train practice commute read watch wake sleep walk cook
    meditate""".split())


#: How long one sleeps: "about 6 hours (a night)".
_SLEEP = re.compile(r"^(?:about |around |roughly |only |barely |at least )?(?P<n>\d+(?:\.\d)?|"
                    r"[a-z]+) hours?\b", _I)
#: What one is doing now holds one value at a time: "I'm reading Dune" (one book now).
_NOW_DOING = {"reads": "reading_now", "watches": "watching_now"}
#: "full-time", "part-time": the hours one works.
_SCHEDULE = re.compile(r"\b(?P<s>full|part)[- ]time\b", _I)


def _owner_phrase(holder: _Holder, det: str | None) -> str:
    """Whose slot a set verb changes, as a noun sentence starts: "her number" of "my mom"
    is "my mom's number", of Anna "Anna's number"; none said: the holder's own."""
    if det is None or det.casefold() in ("his", "her", "their"):
        if holder.key == PROJECT:
            return "our"
        if holder.key.startswith("person:user_"):
            return f"my {holder.key.removeprefix('person:user_').replace('_', ' ')}'s"
        if holder.key.startswith("person:") and holder.name[:1].isupper():
            return f"{holder.name}'s"
        return "my"
    return det


def _started(verb: _Verb) -> _Verb | None:
    """"started eating meat again", "began working at Acme": the inner claim, holding now
    (a new claim of its slot replaces the old one as any would; no change cue of its own)."""
    first, _, rest = verb.rest.partition(" ")
    lemma = verb_lemma(first) if first.casefold().endswith("ing") else None
    if lemma not in _HABITS:  # "started looking into X" stays a start: no claim of a slot
        return None
    rest = re.sub(r"\s+again$", "", rest, flags=_I)
    return _Verb(lemma, rest, replace(verb.manner, past=False, progressive=True))


def _switched_to_doing(verb: _Verb) -> _Verb | None:
    """"switched to teaching biology": teaches biology now (a change of what one does)."""
    doing = re.match(r"^(?:over )?to (?P<ing>[a-z]+ing) (?P<rest>.+)$", verb.rest, _I)
    lemma = verb_lemma(doing["ing"]) if doing else None
    if doing is None or lemma is None or lemma in ("be", "have"):
        return None
    return _Verb(lemma, doing["rest"], replace(verb.manner, change=True, past=False))


def _stopped(verb: _Verb) -> _Verb | None:
    """"stopped eating meat", "gave up learning Spanish", "quit my job at Acme": the inner
    claim, negated, as a change."""
    first, _, rest = verb.rest.partition(" ")
    manner = replace(verb.manner, negated=not verb.manner.negated, change=True, past=False)
    if verb.lemma == "lose" and first.casefold() not in ("my", "our", "his", "her", "their"):
        return None  # "lost 10 pounds", "lost the game": nothing one had is gone
    if verb.lemma == "lose" and re.fullmatch(r"(?:my|his|her|their) job", _untimed(verb.rest), _I):
        return _Verb("be", "unemployed", replace(verb.manner, change=True, past=False))
    if first.casefold().endswith("ing") and verb_lemma(first):  # "… after his heart scare"
        rest = re.sub(r"(?:^|\s+)(?:after|since|because|when|due to|following)\s+.+$", "",
                      rest, flags=_I)
        rest = _FOR_GOOD.sub("", rest)  # "quit smoking for good": no part of what stopped
        return _Verb(verb_lemma(first) or first, rest, manner)
    job = re.match(r"^(?:my|the) (?:job|position|role|work)(?: (?:at|with) (?P<org>.+))?$",
                   verb.rest, _I)
    if job and job["org"]:
        return _Verb("work", f"at {job['org']}", manner)
    if verb.lemma in ("leave", "quit") and verb.rest[:1].isupper():  # an employer
        return _Verb("work", f"at {verb.rest}", manner)
    if verb.lemma != "leave" and verb.rest:
        return _Verb("have", _parted_with(verb), manner)
    group = re.match(rf"^(?:my|our|the) (?P<g>(?:[\w-]+ )?(?:{_GROUPS}))$",
                     _untimed(verb.rest), _I)
    if group is not None:  # "left the band": no longer in it
        return _Verb("have", group["g"], manner)
    return None


_FOR_GOOD = re.compile(r"(?:^|\s+)(?:completely|entirely|altogether|for good|once and for all|"
                       r"cold turkey)$", _I)


#: What one leaves by no longer being part of it ("left the band", "left my book club").
_GROUPS = "band|club|team|choir|group|league|orchestra|gym|class|course|church|committee"


def _parted_with(verb: _Verb) -> str:
    """What "sold my old car to my brother" / "cancelled my gym membership" parted with."""
    what = re.sub(r"^(?:my|our|the|his|her|their)\s+", "", verb.rest, flags=_I)
    if verb.lemma in ("sell", "give away", "donate", "trade in", "trade", "swap", "exchange"):
        what = re.sub(r"\s+(?:to|for)\s+.+$", "", what, flags=_I)
    if verb.lemma == "lose":  # "lost my Kindle on the train"
        what = re.sub(r"\s+(?:on|at|in|during|while)\s+.+$", "", what, flags=_I)
    # "cut out coffee completely last month": the adverb ends the value once the time goes
    what = _FOR_GOOD.sub("", _untimed(what))
    if verb.lemma in ("give up", "quit", "cut out", "drop", "stop"):  # "… for Lent"
        what = re.sub(r"\s+(?:for|after|since|because|when|due to)\s+.+$", "", what, flags=_I)
    if verb.lemma in ("replace", "swap"):
        what = re.sub(r"\s+(?:with|by)\s+.+$", "", what, flags=_I)
    if verb.lemma in ("delete", "uninstall"):  # "deleted Instagram from my phone"
        what = re.sub(r"\s+(?:from|off)\s+.+$", "", what, flags=_I)
    return _HELD_THROUGH.sub("", what)


#: "moved out (of my parents' place)", "got his own apartment": whoever the holder lived
#: with, they no longer do.
_LEFT_HOME = re.compile(r"^(?:move out(?: of .+)?|(?:move into|get|find|rent|buy) (?:my|his|her|"
                        r"their|our) own (?:place|apartment|flat|house|home|room|condo|studio)"
                        r"(?: in (?P<place>[A-Z].*)| downtown| uptown| nearby| across town|"
                        r" (?:close to|near) (?:work|the office|campus))?)$", _I)


def _moved_out(holder: _Holder, clause: str, manner: _Manner) -> Statement:
    """No longer lives with whoever the holder lived with (the slot, with no value)."""
    gone = replace(manner, negated=True, change=True, past=False)
    said = _statement(holder, "lives_with", "", _phrase(third_person(clause)), gone, "move")
    return replace(said, value=None, single=True)


def _no_longer_had(name: str, manner: _Manner) -> Statement:
    """"Rex passed away": whatever the user had by that name (a pet, ...) is gone."""
    gone = replace(manner, negated=True, change=True, past=False)
    return _statement(_Holder(USER, "User"), "has", name, f"User no longer has {name}", gone,
                      "have")


def _decision(text: str, manner: _Manner) -> list[Statement]:
    phrase = _phrase(text)
    if not content_words(phrase):
        return []
    category = _category(phrase)
    attribute = f"decision_{category}" if category else "decided"
    content = f"The team decided to {phrase}" if re.match(r"^[a-z]", phrase) and \
        verb_lemma(phrase.split()[0]) else f"The team decided on {phrase}"
    return [_statement(_Holder(PROJECT, "The team"), attribute, phrase, content,
                       replace(manner, past=False), None)]


#: Kinds of value a bare correction can put in place of one of its kind in a claim with no
#: slot: a weekday, a time, a date, a number.
_VALUE_KINDS = (
    re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", _I),
    re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)(?!\w)|\b\d{1,2}:\d{2}\b", _I),
    re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? "
               r"\d{1,2}(?:st|nd|rd|th)?\b", _I),
    re.compile(r"\b\d+(?:[.,]\d+)?\b"),
)


#: A value that opens with its preposition: "at Cafe Luna", "on the 14th".
_LED_BY_PREPOSITION = re.compile(r"^(?:at|in|on|to|for|with|from|near|by) ", _I)


def _mention_corrected(clause: str, last: Statement) -> list[Statement]:
    """"The package arrives Tuesday." … "Scratch that, Thursday.": a claim with no slot, its
    value of the same kind (a weekday, a time, a date, a number) replaced."""
    value = clean_value(clause)
    for kind in _VALUE_KINDS:
        if kind.fullmatch(value) is None:
            continue
        said = list(kind.finditer(last.content))
        if not said:
            return []
        old = said[-1]
        content = f"{last.content[:old.start()]}{value}{last.content[old.end():]}"
        return [replace(last, content=content, explicit_change=True, negated=False,
                        importance=max(last.importance, 7))]
    return []


def _part_replaced(old: str, value: str) -> str:
    """``value`` in place of the part of ``old`` of the same kind (a weekday, a time, a date,
    a number) when ``old`` says more than that part: "to Tokyo on Friday" corrected by
    "Saturday" is "to Tokyo on Saturday"; else ``value``."""
    for kind in _VALUE_KINDS:
        if kind.fullmatch(value) is None or kind.fullmatch(old) is not None:
            continue
        said = list(kind.finditer(old))
        if said and content_words(f"{old[:said[-1].start()]} {old[said[-1].end():]}"):
            return f"{old[:said[-1].start()]}{value}{old[said[-1].end():]}"
    return value


def _fragment(clause: str, manner: _Manner, before: list[Statement] | None) -> list[Statement]:
    """"Sorry, I meant Porto" / "Porto, not Lisbon": the last slotted claim, corrected."""
    if not manner.change or not before or len(clause.split()) > FRAGMENT_WORDS \
            or not _bare_value(clause):
        return []
    last = next((s for s in reversed(before) if s.attribute is not None), None)
    if last is None or last.attribute is None or last.value is None:
        return _mention_corrected(clause, before[-1])
    value = clean_value(clause)
    if not content_words(value):
        return []
    if last.attribute == "has_pet" and " named " in last.value:  # the pet's name corrected
        value = f"{last.value.rsplit(' named ', 1)[0]} named {value}"
    counted = re.match(r"^\d+ (?P<what>\D.*)$", last.value)
    if counted is not None and re.fullmatch(r"\d+", value):  # "8 engineers" … "Actually 9"
        value = f"{value} {counted['what']}"
    value = _part_replaced(last.value, value)  # "to Tokyo on Friday" … "Saturday"
    many = not (last.single or is_single_valued(last.attribute) or last.negated)
    led = _LED_BY_PREPOSITION.match(last.value)
    if many and led is not None and _LED_BY_PREPOSITION.match(value) is None:
        value = f"{led.group(0)}{value}"  # "at Cafe Luna" … "Cafe Sol": at Cafe Sol
    content = last.content.replace(last.value, value) if last.value in last.content else \
        render(last.holder_name, last.attribute, value)
    entities = tuple(dict.fromkeys(value if e == last.value else e for e in last.entities))
    corrected = replace(last, value=value, content=content, explicit_change=True,
                        negated=False, importance=max(last.importance, 7), entities=entities)
    if not many or corrected.slot == last.slot:  # one slot: the new value replaces the old
        return [corrected]
    # one value of many ("meets at Cafe Luna"): the wrong one is taken back, as "instead of"
    wrong = render(last.holder_name, last.attribute, last.value, negated=True, change=True,
                   verb=verb_lemma(last.attribute))
    return [corrected, replace(last, content=wrong, negated=True, explicit_change=True,
                               importance=max(last.importance, 7))]
