"""Word lists the embedded engine's cues are made of: no model, no downloads.

Small, closed lists: words that are never names on their own, the suffixes that make a name
an organisation or a place, role nouns, relation words, verbs that follow a person, and the
words that carry no content in chat. English only; a deployment in another language
would swap this module.
"""

from __future__ import annotations

__all__ = [
    "STOP_WORDS",
    "FUNCTION_WORDS",
    "REPORTING_WORDS",
    "IRREGULAR_FORMS",
    "NEGATORS",
    "LIKING_WORDS",
    "DISLIKING_WORDS",
    "REFUSALS",
    "AUXILIARIES",
    "BE_FORMS",
    "SPEAKER_PRONOUNS",
    "LISTENER_PRONOUNS",
    "ANYONE_PRONOUNS",
    "OPENERS",
    "TITLES",
    "ORG_SUFFIXES",
    "ORG_PREFIXES",
    "ORG_NOUNS_AFTER",
    "PLACE_SUFFIXES",
    "PLACE_PREFIXES",
    "COMPASS_WORDS",
    "NOUN_ENDINGS",
    "PLURAL_NOUN_ENDINGS",
    "ROLE_NOUNS",
    "RELATIONS",
    "PERSON_VERBS_AFTER",
    "PERSON_WORDS_BEFORE",
    "PROJECT_NOUNS",
    "PLACE_NOUNS",
    "PLACE_NOUNS_AFTER",
    "PLACE_KINDS",
    "ORG_KINDS",
    "EVENT_NOUNS",
    "CONNECTORS",
    "CHAT_WORDS",
    "GENERIC_WORDS",
]


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOP_WORDS = _wordset(
    """
    i i'm i'd i've i'll we you he she they it my our your his her their its me us them the a
    an and but or so if then when what where who why how which that this these those there
    here in on at for from to with by of as after before since until also just not no yes
    maybe please thanks thank hi hey hello wow oh ok okay good great perfect nice cool sure
    right well morning evening afternoon night today tonight tomorrow yesterday let let's
    can could would should will do does did is are was were have has had be been being
    update quick status new last next first second third one two three four five six seven
    eight nine ten fig figure table section step note done yeah haha lol omg congrats
    congratulations sounds awesome amazing love glad sorry happy same exactly absolutely
    definitely agreed noted got go here's that's it's what's there's everything everyone
    nothing something anything any all some both each every most many much more other
    another such only own very too again once ah aw aww um hmm gosh dear bye see look also
    anyway plus though although because while during over under between into through about
    above monday tuesday wednesday thursday friday saturday sunday january february march
    april may june july august september october november december mon tue wed thu fri sat
    sun don't can't won't isn't wasn't didn't doesn't i'd haven't it'll that'll you're we're
    they're you've we've you'll we'll he's she's who's let's how's where's mondays tuesdays
    wednesdays thursdays fridays saturdays sundays best regards cheers mr mrs ms dr prof
    """
)
# imperative and other words that open a sentence right before a name ("Ask Lena Hoffmann")
OPENERS = _wordset(
    """
    add ask send tell call email check put make use let get keep take give see write move
    drop remind book near otherwise meet invite thank cc ping loop
    """
)
TITLES = {"dr", "prof", "mr", "mrs", "ms", "aunt", "uncle", "sir", "madam", "professor"}
ORG_SUFFIXES = {
    "institute", "university", "college", "school", "academy", "lab", "labs", "laboratory",
    "analytics", "inc", "ltd", "gmbh", "corp", "corporation", "company", "co", "foundation",
    "fund", "bank", "hospital", "clinic", "center", "centre", "society", "association",
    "council", "agency", "group", "museum", "library", "church", "club", "network", "press",
    "systems", "technologies", "solutions", "studio", "studios", "partners", "ministry",
    "department", "trust", "team", "orchestra", "band", "federation", "union", "committee",
    "consortium", "initiative", "organisation", "organization", "ag", "llc", "plc",
    "station", "observatory", "aquarium", "bureau", "authority",
}  # fmt: skip
ORG_PREFIXES = {"university", "bank", "museum", "institute", "ministry", "department"}
ORG_NOUNS_AFTER = ORG_SUFFIXES | {"startup", "firm", "office", "offices", "org", "hq", "people"}
PLACE_SUFFIXES = {
    "sea", "ocean", "island", "islands", "bay", "lake", "river", "mountain", "mountains",
    "park", "beach", "coast", "street", "valley", "city", "county", "state", "republic",
    "kingdom", "gulf", "peninsula", "canyon", "forest", "desert", "harbour", "harbor",
    "keys", "cays", "reef", "reefs", "strait", "straits", "archipelago", "atoll", "lagoon",
    "isles", "fjord", "basin", "plateau", "glacier", "cove", "falls", "heights", "highlands",
    "quay", "square", "station", "district", "quarter", "wharf", "docks", "plaza",
    "avenue", "road", "boulevard", "marina", "promenade", "embankment", "airport", "borough",
}  # fmt: skip
# "East Atlantic", "Northern Ireland", "Central Asia": a compass word opens a region's name
COMPASS_WORDS = {
    "north", "south", "east", "west", "northern", "southern", "eastern", "western",
    "northeast", "northwest", "southeast", "southwest", "central", "upper", "lower",
}  # fmt: skip
PLACE_PREFIXES = {
    "cape", "mount", "lake", "port", "saint", "san", "santa", "st", "fort", "isle",
} | COMPASS_WORDS  # fmt: skip
# Endings of English common nouns no one's surname has: the head word of "Ocean
# Instruments", "Ecological Informatics", "United Nations" names a thing, not a person.
# A stem of at least four letters must come before the ending ("Clement" keeps its name).
NOUN_ENDINGS = (
    "ments", "ment", "tions", "tion", "sions", "sion", "ics", "ologies", "ology", "isms",
    "ism",
)  # fmt: skip
# the plural ones: a company's name is often "X <plural noun>" ("Texas Instruments")
PLURAL_NOUN_ENDINGS = ("ments", "tions", "sions")
ROLE_NOUNS = {
    "postdoc", "scientist", "engineer", "nurse", "teacher", "student", "researcher",
    "professor", "doctor", "developer", "designer", "analyst", "manager", "director", "lead",
    "counselor", "counsellor", "therapist", "artist", "writer", "programmer", "consultant",
    "officer", "curator", "intern", "lecturer", "chef", "lawyer", "accountant", "architect",
    "journalist", "editor", "founder", "ceo", "cto", "coordinator", "technician", "librarian",
    "pharmacist", "dentist", "musician", "photographer", "firefighter", "pilot", "mechanic",
    "electrician", "farmer", "baker", "head", "fellow", "assistant", "administrator", "admin",
    "advisor", "adviser", "supervisor", "instructor", "coach", "painter", "author", "singer",
    "dancer", "volunteer", "veterinarian", "vet", "surgeon", "physician", "paramedic",
    "secretary", "clerk", "cashier", "waiter", "waitress", "barista", "driver", "soldier",
    "postgrad", "phd", "candidate", "specialist", "expert", "economist",
    "statistician", "biologist", "chemist", "physicist", "ecologist", "geologist", "mentor",
}  # fmt: skip
RELATIONS = {
    "partner", "friend", "colleague", "boss", "manager", "supervisor", "sister", "brother",
    "mom", "mum", "mother", "dad", "father", "son", "daughter", "wife", "husband",
    "girlfriend", "boyfriend", "cousin", "aunt", "uncle", "grandma", "grandmother", "grandpa",
    "grandfather", "neighbour", "neighbor", "roommate", "flatmate", "coworker", "co-worker",
    "mentor", "niece", "nephew", "fiance", "fiancé", "fiancée", "advisor", "teammate", "pi",
    "collaborator", "co-author", "coauthor", "buddy", "pal", "kid", "child", "baby", "bestie",
}  # fmt: skip
PERSON_VERBS_AFTER = {
    "said", "says", "told", "tells", "asked", "asks", "thinks", "thought", "agreed", "wants",
    "sent", "wrote", "called", "texted", "emailed", "mentioned", "suggested", "replied",
    "laughed", "loves", "likes", "hates", "lives", "teaches", "plays", "came", "comes",
    "joined", "offered", "invited", "became", "took", "gave", "helped", "eats", "cooks",
    "reports", "leads", "runs", "ran", "met", "visited", "works", "worked", "knows", "and",
}  # fmt: skip
PERSON_WORDS_BEFORE = {
    "met",
    "with",
    "told",
    "asked",
    "call",
    "called",
    "email",
    "emailed",
    "thank",
    "thanks",
    "ask",
    "tell",
    "meet",
    "visit",
    "invite",
    "invited",
}
PROJECT_NOUNS = {
    "project",
    "dataset",
    "benchmark",
    "repo",
    "repository",
    "library",
    "package",
    "app",
    "tool",
    "paper",
    "thesis",
    "book",
    "album",
    "podcast",
    "blog",
    "startup",
    "website",
    "game",
    "pipeline",
    "platform",
    "framework",
    "novel",
}
PLACE_NOUNS = {
    "city",
    "town",
    "village",
    "neighbourhood",
    "neighborhood",
    "district",
    "country",
    "capital",
    "island",
    "region",
    "suburb",
    "area",
    "quarter",
}
# a place noun in lower case right after a name: "Sal island", "Leipzig city"
PLACE_NOUNS_AFTER = {
    "island", "islands", "city", "town", "village", "district", "suburb", "neighbourhood",
    "neighborhood", "county", "province", "area", "quarter", "borough",
}  # fmt: skip
# what "X is a ..." says a place is: "a business district", "a small town by the sea"
PLACE_KINDS = {
    "city", "town", "village", "neighbourhood", "neighborhood", "district", "country",
    "capital", "island", "region", "suburb", "quarter", "borough", "county", "province",
    "square", "street", "quay", "harbour", "harbor", "port", "park",
}  # fmt: skip
# what "X is a ..." says an organisation is: "a small energy company", "a startup"
ORG_KINDS = {
    "company", "startup", "firm", "nonprofit", "charity", "employer", "bank", "university",
    "institute", "agency", "consultancy", "foundation", "corporation", "publisher", "insurer",
}  # fmt: skip
# acronyms that name a thing a name has or makes ("the Archiva DOI", "Ada's CV", "the Ocean
# Data API"), not a part of the name: only these are trimmed off the end of a name ("Team USA",
# "Radio NZ" and "Washington DC" keep theirs)
THING_ACRONYMS = {
    "doi", "dois", "api", "apis", "cv", "cvs", "pdf", "pdfs", "url", "urls", "id", "ids",
    "isbn", "issn", "sdk", "ui", "faq", "csv", "json", "xml", "html", "sql", "gps", "qr",
    "readme", "repo", "vm", "db",
}  # fmt: skip
# the head noun of an event's name: "Bioacoustics Symposium", "Leipzig Marathon" (a topic:
# the page types have no event, and it is no place even when held in one)
EVENT_NOUNS = {
    "symposium", "conference", "workshop", "festival", "summit", "congress", "convention",
    "expo", "meetup", "hackathon", "seminar", "colloquium", "marathon", "championship",
    "championships", "olympics", "gala", "ceremony", "retreat", "webinar",
}  # fmt: skip
CONNECTORS = {"of", "for", "de", "da", "do", "dos", "van", "von", "der", "den", "la", "le", "du"}
CHAT_WORDS = _wordset(
    """
    i me my mine we our us you your yours he she it they them his her its their the a an and
    or but so if then to of in on at for with by from as is are was were be been being am do
    does did have has had will would can could should may might must just really very so too
    also still even that this these those there here what which who how when where why not
    no yes yeah oh wow hey hi hello thanks thank great good nice cool awesome amazing love
    glad happy sounds sound totally definitely sure lol haha think feel know like get got go
    going thing things stuff lot lots much way it's that's i'm you're i've don't can't
    what's gonna wanna kinda such some any all more most well right okay ok pretty super
    quite always never something anything everything
    """
)
# Words that say how a conversation feels, not what happened: a sentence made only of
# these (and chat words) is glue ("It made me think we can make a difference").
GENERIC_WORDS = _wordset(
    """
    appreciate appreciated appreciates mean means meant hope hoping hoped wish wishes glad
    happy proud thanks thank thankful grateful agree agreed know knew think thought guess
    feel feels felt feeling sure wait hear heard see seen saw tell told say said talk talking
    chat chatting chatted share sharing keep keeps kept going make makes made making
    difference impact support supported supporting supportive journey great awesome amazing
    cool nice wonderful fantastic incredible inspiring inspired inspiration inspires lovely
    beautiful special important true right cute fun blast exciting excited stoked thrilled
    bet exactly absolutely means lot lots little bit way kind thing things stuff people world
    life time times moment moments day days good best better well hard tough rough easy
    sweet heartwarming rewarding motivated motivating motivation motivates encouragement
    encouraging encourage strength courage proud awesome totally definitely super tho though
    yeah wow sounds sound looks look looking seems seem hear glad wonderful gonna wanna let
    lets let's really truly honestly actually literally basically cool wish luck congrats
    congratulations sorry care caring happen happened happening come comes came get gets
    got getting give gives gave take takes took done doing does did want wants wanted need
    needs needed try trying tried yes sure ok okay pic pics picture photo photos cheers
    forward can't won't don't didn't isn't it's that's what's there's here's i'm you're
    we're they're i've you've we've awesome awesomeness hug hugs love loved loves ones around
    sitting standing holding check out off
    """
)


# -- what the entailment floor reads a claim and its turn by (dream.gates.entailment) --

# English function words (a closed class), and the words a claim writer adds around what a
# turn said (reporting verbs, time words).
FUNCTION_WORDS = frozenset(
    (
        "a", "about", "above", "after", "again", "against", "all", "almost", "along", "already",
        "also", "although", "always", "am", "among", "an", "and", "another", "any", "anyone",
        "anything", "are", "aren't", "around", "as", "at", "back", "be", "because", "been",
        "before", "being", "below", "between", "both", "but", "by", "can", "can't", "cannot",
        "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "done",
        "down", "during", "each", "either", "else", "enough", "even", "ever", "every", "few",
        "for", "from", "further", "get", "gets", "getting", "got", "had", "hadn't", "has",
        "hasn't", "have", "haven't", "having", "he", "he'd", "he'll", "he's", "her", "here",
        "hers", "herself", "him", "himself", "his", "how", "i", "i'd", "i'll", "i'm", "i've", "if",
        "in", "into", "is", "isn't", "it", "it's", "its", "itself", "just", "least", "less", "let",
        "let's", "like", "lot", "lots", "made", "make", "many", "may", "me", "might", "more",
        "most", "much", "must", "my", "myself", "near", "need", "neither", "never", "no", "nor",
        "not", "now", "of", "off", "often", "on", "once", "one", "only", "or", "other", "others",
        "otherwise", "our", "ours", "ourselves", "out", "over", "own", "per", "perhaps", "quite",
        "rather", "really", "same", "several", "shall", "she", "she'd", "she'll", "she's",
        "should", "shouldn't", "since", "so", "some", "something", "sometimes", "soon", "still",
        "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves",
        "themself", "then", "there", "there's", "these", "they", "they'd", "they'll", "they're",
        "they've", "thing", "things", "this", "those", "though", "through", "thus", "till", "to",
        "too", "toward", "towards", "under", "until", "up", "upon", "us", "very", "via", "was",
        "wasn't", "way", "we", "we'd", "we'll", "we're", "we've", "well", "were", "weren't",
        "what", "what's", "when", "where", "whether", "which", "while", "who", "who's", "whom",
        "whose", "why", "will", "with", "within", "without", "won't", "would", "wouldn't", "yes",
        "yet", "you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself",
        "yourselves", "actually", "maybe", "probably", "pretty", "definitely", "anyway", "okay",
        "ok", "oh", "hey", "hi", "hello", "thanks", "thank", "please", "sure", "right", "going",
        "gonna", "want", "wants", "wanted",
    )
)  # fmt: skip
REPORTING_WORDS = frozenset(
    (
        "said", "says", "told", "tells", "mentioned", "mentions", "noted", "notes", "asked",
        "asks", "answered", "answers", "replied", "replies", "recommended", "recommends",
        "suggested", "suggests", "advised", "advises", "offered", "offers", "promised", "promises",
        "shared", "shares", "reported", "reports", "explained", "explains", "agreed", "agrees",
        "decided", "decides", "prefers", "preferred", "prefer", "likes", "liked", "plans",
        "planned", "planning", "plan", "intends", "intended", "hopes", "hoped", "thinks",
        "thought", "wondered", "wonders", "feels", "felt", "believes", "believed", "remembered",
        "reminded", "reminder", "remind", "user", "assistant", "person", "people", "someone",
        "outcome", "session", "according", "apparently", "currently", "recently", "later",
        "earlier", "today",
        "yesterday", "tomorrow", "week", "weeks", "month", "months", "year", "years", "day",
        "days", "weekend", "morning", "evening", "afternoon", "night", "also",
    )
)  # fmt: skip
IRREGULAR_FORMS = {
    "told": "tell", "said": "say", "went": "go", "gone": "go", "goes": "go", "bought": "buy",
    "brought": "bring", "thought": "think", "ran": "run", "made": "make", "took": "take",
    "taken": "take", "gave": "give", "given": "give", "got": "get", "gotten": "get",
    "left": "leave", "met": "meet", "saw": "see", "seen": "see", "felt": "feel",
    "kept": "keep", "wrote": "write", "written": "write", "began": "begin", "begun": "begin",
    "won": "win", "lost": "lose", "paid": "pay", "sent": "send", "spent": "spend",
    "built": "build", "taught": "teach", "caught": "catch", "found": "find", "held": "hold",
    "heard": "hear", "knew": "know", "known": "know", "came": "come", "became": "become",
    "sold": "sell", "ate": "eat", "eaten": "eat", "drove": "drive", "driven": "drive",
    "flew": "fly", "flown": "fly", "flight": "fly", "chose": "choose", "chosen": "choose",
    "fell": "fall", "fallen": "fall", "forgot": "forget", "forgotten": "forget",
    "grew": "grow", "grown": "grow", "led": "lead", "rode": "ride", "ridden": "ride",
    "sang": "sing", "sung": "sing", "sat": "sit", "slept": "sleep", "spoke": "speak",
    "spoken": "speak", "stood": "stand", "swam": "swim", "threw": "throw",
    "thrown": "throw", "understood": "understand", "woke": "wake", "wore": "wear",
    "worn": "wear", "broke": "break", "broken": "break", "drew": "draw", "drawn": "draw",
    "drank": "drink", "drunk": "drink", "fought": "fight", "hid": "hide", "hidden": "hide",
    "hurt": "hurt", "lent": "lend", "lit": "light", "meant": "mean", "rang": "ring",
    "rose": "rise", "risen": "rise", "shook": "shake", "shot": "shoot", "shut": "shut",
    "sought": "seek", "stole": "steal", "stolen": "steal", "struck": "strike",
    "swore": "swear", "tore": "tear", "torn": "tear", "wept": "weep", "wound": "wind",
    "did": "do", "done": "do", "does": "do", "had": "have", "has": "have", "was": "be",
    "were": "be", "been": "be", "is": "be", "are": "be", "am": "be", "children": "child",
    "men": "man", "women": "woman", "people": "person", "mice": "mouse", "feet": "foot",
    "teeth": "tooth", "better": "good", "best": "good", "worse": "bad", "worst": "bad",
}  # fmt: skip
NEGATORS = frozenset(
    (
        "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "can't",
        "don't", "doesn't", "didn't", "won't", "wouldn't", "isn't", "aren't", "wasn't", "weren't",
        "haven't", "hasn't", "hadn't", "shouldn't", "couldn't", "mustn't", "without", "instead",
        "anymore", "longer",
    )
)  # fmt: skip
LIKING_WORDS = frozenset(
    (
        "love", "loves", "loved", "loving", "like", "likes", "liked", "enjoy", "enjoys", "enjoyed",
        "adore", "adores", "adored", "fond", "favourite", "favorite", "prefer", "prefers",
        "preferred", "keen",
    )
)  # fmt: skip
DISLIKING_WORDS = frozenset(
    (
        "hate", "hates", "hated", "hating", "dislike", "dislikes", "disliked", "loathe", "loathes",
        "loathed", "detest", "detests", "detested", "despise", "despises", "despised",
        "can't-stand",
    )
)  # fmt: skip
AUXILIARIES = frozenset(
    (
        "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "will", "would",
        "shall", "should", "can", "could", "may", "might", "must", "do", "does", "did", "also",
        "still", "now", "then", "just", "really", "already", "always", "never", "often", "usually",
        "finally", "recently", "once", "soon", "only", "even", "both", "actually", "has", "to",
        "had", "to", "going", "gonna",
    )
)  # fmt: skip
BE_FORMS = frozenset(
    (
        "is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "getting",
    )
)  # fmt: skip
SPEAKER_PRONOUNS = frozenset(
    (
        "i", "i'm", "i'll", "i've", "i'd", "we", "we're", "we'll", "we've", "we'd",
    )
)  # fmt: skip
LISTENER_PRONOUNS = frozenset(
    (
        "you", "you're", "you'll", "you've", "you'd",
    )
)  # fmt: skip
ANYONE_PRONOUNS = frozenset(
    (
        "he", "she", "they", "it", "this", "that", "who", "which", "he's", "she's", "they're",
        "it's", "he'd", "she'd", "they'd", "there", "someone", "everyone",
    )
)  # fmt: skip


REFUSALS = frozenset(
    (
        "refuse", "refuses", "refused", "refusing", "decline", "declines", "declined",
        "declining", "reject", "rejects", "rejected", "rejecting",
    )
)  # fmt: skip
