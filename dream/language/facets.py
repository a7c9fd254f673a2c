"""Facets of a person's life, and what a person keeps coming back to in each.

Job: the facets (sports and exercise; arts, crafts and music; books, films and games;
outdoors and travel; food; family; friends; pets; work; school; community and causes;
home; health; beliefs) and their cue words, by which a person page's cited ``## Profile``
(``dream.wiki.profile``) files the things the person's claims name again and again, with a
citation for each thing (``facet_of``, ``thing_key``, ``words``): a synthesis across
sessions that one claim cannot give. The person's summary, the line INDEX.md shows, says
it in the profile's words (``dream.wiki.profile.summary_parts``).

Boundary: words in, facets and thing keys out. No model; English cue words (like
``dream.language.lexicon``); a deployment in another language would swap this module.
"""

from __future__ import annotations

import re

__all__ = ["HEADINGS", "facet_of", "stem", "thing_key", "words"]

# heading -> cue words (a word also matches without a trailing "s")
_CUES: dict[str, str] = {
    "Sports, exercise and fitness (hobbies, activities)": """
        sport sports game team match workout workouts exercise exercising fitness gym yoga
        pilates run runs ran running runner race marathon 5k jog jogging hike hikes hiked
        hiking trail swim swims swimming surf surfing ski skiing snowboard cycling bike
        biking climb climbing bouldering kickboxing boxing martial karate tennis soccer
        football basketball baseball volleyball golf frisbee training trained coach
        bootcamp boot weights lifting dance dancing kayak kayaking sailing
    """,
    "Arts, crafts and music (hobbies, activities)": """
        art arts artwork artist paint paints painted painting paintings draw draws drew
        drawing drawings sketch sketching pottery ceramics clay bowl bowls vase craft
        crafts knit knitting sew sewing photography photographer camera music musical song
        songs guitar piano violin clarinet cello drum drums flute instrument instruments
        sing sings sang singing singer band bands concert concerts album sculpture
        glass canvas poetry poem poems
    """,
    "Books, films, games and media (hobbies, activities)": """
        book books read reads reading novel novels author library write writes writing
        wrote story stories blog blogging screenplay script scripts movie movies film films
        watch watched watching series show shows episode tv video videos game games gaming
        gamer console tournament tournaments chess puzzle comic comics anime podcast
        podcasts board streaming
    """,
    "Outdoors, nature and travel (trips, places)": """
        trip trips travel travels traveled travelled traveling travelling vacation holiday
        visit visits visited visiting tour toured flight flew road roadtrip beach beaches
        mountain mountains lake lakes ocean sea island camp camping camped tent campfire
        nature outdoors park parks forest hike abroad country countries city cities state
        states europe sunset sunrise waterfall meteor stars garden gardening flowers
    """,
    "Food and cooking": """
        food foods cook cooks cooking cooked bake bakes baking baked recipe recipes dessert
        desserts cake cakes cookies pie dinner lunch breakfast meal meals restaurant eat
        ate eating snack chocolate coffee tea dish dishes kitchen vegan ingredients
    """,
    "Family and relationships": """
        family families fam kid kids child children son sons daughter daughters husband
        wife partner mom mum mother moms dad father dads parent parents brother brothers
        sister sisters sibling siblings grandma grandpa grandmother grandfather
        grandparents grandchild grandkids baby babies cousin cousins aunt uncle niece
        nephew married marriage marry wedding divorce divorced boyfriend girlfriend fiance
        spouse missus hubby relatives relative adopt adopted adopting adoption pregnant
        dating relationship anniversary birthday
    """,
    "Friends and social life": """
        friend friends friendship bestie buddy buddies mate mates party parties hangout
        neighbor neighbors neighbour neighbours group meetup
    """,
    "Pets and animals": """
        pet pets dog dogs puppy puppies pup cat cats kitten kittens turtle turtles fish
        bird birds parrot hamster rabbit bunny horse horses snake lizard vet leash animal
        animals
    """,
    "Work and career (job)": """
        work works worked working job jobs career boss colleague colleagues coworker
        coworkers workmate workmates office company companies business startup client
        clients promotion promoted hired fired interview salary manager shift employer
        profession professional entrepreneur store shop customers sales product products
        brand marketing investors deadline meeting conference
    """,
    "School and education (studies)": """
        school schools college university course courses degree study studies studying
        exam exams teacher student students graduate graduated graduation internship
        intern class classes lecture research thesis certification scholarship learn
        learning lesson lessons
    """,
    "Community, volunteering and causes (events)": """
        community volunteer volunteers volunteering volunteered charity nonprofit shelter
        fundraiser fundraising donation donations donate donated petition campaign cause
        causes activism activist rights veterans homeless awareness protest
        support mentor mentoring mentorship politics policy election office military
        memorial parade pride lgbtq advocacy
    """,
    "Home and where they live": """
        moved move moving live lives lived living home house apartment flat neighborhood
        neighbourhood town village hometown rent
    """,
    "Health and wellbeing": """
        health healthy sick ill illness doctor doctors hospital injury injured hurt
        accident surgery therapy therapist anxiety depression stress stressed mental
        diagnosis medication allergy allergic allergies diet sleep pain recovery
        recovering cancer disease symptoms checkup self-care meditation
    """,
    "Beliefs, values and identity": """
        faith church religion religious god pray prayer spiritual belief beliefs values
        identity transgender trans gender queer gay culture heritage
    """,
}
_WORDS = {facet: frozenset(words.split()) for facet, words in _CUES.items()}
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9'’-]*")
_PHOTO_RE = re.compile(r"\bshared (?:a photo|a photography|a picture)\b[: ]*(?:of\s+)?", re.I)
_ORDER = tuple(_WORDS)
_FIRST: dict[str, int] = {}  # cue word -> index of the first facet that has it
for _i, _facet in enumerate(_ORDER):
    for _w in _WORDS[_facet]:
        _FIRST.setdefault(_w, _i)
_NONE = len(_ORDER)
HEADINGS = _ORDER  # the facets' full headings, in order
_POSSESSIVE_RE = re.compile(r"['’]s?$")


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` as cues are looked up ("pottery's" -> "pottery"),
    without the "shared a photo of" of a photo's caption."""
    found = _WORD_RE.findall(_PHOTO_RE.sub(" ", text).lower())
    return [_POSSESSIVE_RE.sub("", w) for w in found]


def facet_of(word: str) -> str | None:
    """The first facet (in ``_CUES`` order) whose cues have ``word`` or it without a
    trailing "s"."""
    i = min(_FIRST.get(word, _NONE), _FIRST.get(word.rstrip("s"), _NONE))
    return _ORDER[i] if i < _NONE else None


def thing_key(word: str) -> str:
    """One key for a thing however it is written: ``stem`` after the plural
    ("paintings" and "painting" -> "paint", "stories" and "story" -> "story", "swimming"
    and "swims" -> "swim", "hikes" and "hiking" -> "hik")."""
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    key = stem(word)
    if len(key) > 3 and key[-1] == key[-2] and key[-1] not in "aeiouls":
        key = key[:-1]  # "swimming" -> "swimm" -> "swim", as "swims"
    elif len(key) > 3 and key.endswith("e"):
        key = key[:-1]  # "hike" -> "hik", as "hiking"
    return key


def stem(word: str) -> str:
    """One key for the forms of a word ("paints", "painted", "painting" -> "paint")."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
