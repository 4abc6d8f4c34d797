"""Roman numerals read as words for the `characters` front end: "Chapter IV" is "chapter four",
"World War II" "world war two", "Henry VIII" "henry the eighth", French "Louis XIV" "louis quatorze"
and "le XIXe siècle" "le dix-neuvième siècle", Spanish "siglo XXI" "siglo veintiuno".

The cleaners have lowered the text by the time it is read, and a lone "vi", "mix", "di" or "mil" is a
word, so a numeral is read only where the word before it says it is one: a heading (chapter, part,
volume), a century, or a monarch's or pope's name from each language's list. A single "i" after a
name or a heading is read only before a clause's end, where it cannot be the pronoun ("in part i
think"). German regnal names take the case a preposition before them asks for (Ludwig XIV. der
vierzehnte, unter Ludwig XIV. dem vierzehnten); Russian and Polish centuries the case of the noun
("в XIX веке" в девятнадцатом веке, "w XX wieku" w dwudziestym wieku); Swedish "Karl XII" karl den
tolfte; Turkish writes the numeral first ("II. Mehmet" ikinci mehmet).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Optional

from xtts_cli.data.numbers import number_words, regional, slavic_ordinal

__all__ = ["roman_reader", "title_numerals"]

_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
_CANONICAL = ((100, "c"), (90, "xc"), (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"))


def _value(numeral: str) -> Optional[int]:
    """The value of a numeral written the canonical way (xiv, not xiiii or ivx), or None."""
    total = 0
    for letter, after in zip(numeral, numeral[1:] + " "):
        value = _VALUES[letter]
        total += -value if after != " " and _VALUES[after] > value else value
    written, left = "", total
    for value, letters in _CANONICAL:
        count, left = divmod(left, value)
        written += letters * count
    return total if written == numeral and total > 0 else None


# Words after which a numeral numbers a heading or a thing, read as a cardinal (chapter four, world war
# two). Single letters other than i, v and x are left: "type c", "appendix d" are letters.
_HEADINGS = {
    "en": "chapter|part|volume|book|act|scene|section|article|appendix|phase|stage|level|type|class|category|"
    "season|episode|title|world war|super bowl|mark|star wars episode",
    "de": "kapitel|teil|band|buch|akt|szene|abschnitt|artikel|anhang|phase|stufe|typ|klasse|kategorie|staffel|folge",
    "es": "capítulo|parte|tomo|volumen|libro|acto|escena|sección|artículo|anexo|fase|nivel|tipo|clase|categoría|"
    "temporada|episodio|título|siglo|siglos",
    "fr": "chapitre|partie|tome|livre|acte|scène|section|article|annexe|phase|niveau|type|classe|catégorie|saison|"
    "épisode|titre",
    "it": "capitolo|parte|tomo|volume|libro|atto|scena|sezione|articolo|allegato|fase|livello|tipo|classe|categoria|"
    "stagione|episodio|titolo",
    "nl": "hoofdstuk|deel|boek|akte|sectie|artikel|bijlage|fase|niveau|type|klasse|categorie|seizoen|aflevering|titel",
    "sv": "kapitel|del|band|bok|akt|scen|avsnitt|artikel|bilaga|fas|nivå|typ|klass|kategori|säsong",
    "pt": "capítulo|parte|tomo|volume|livro|ato|acto|cena|secção|seção|artigo|anexo|fase|nível|tipo|classe|"
    "categoria|temporada|episódio|título",
}

# Names that monarchs and popes share, lower case as the cleaners leave them; a feminine name takes a
# feminine ordinal where the language has one (isabel segunda, elisabetta seconda).
_NAMES = {
    "en": "henry|edward|george|william|charles|james|richard|john|louis|philip|frederick|ferdinand|alexander|"
    "nicholas|peter|paul|pius|leo|benedict|gregory|innocent|clement|urban|boniface|napoleon|francis|ramesses|"
    "ptolemy|gustav|gustavus|christian|haakon|olav|harald|carl|alfonso|felipe|juan carlos|umberto|wilhelm|otto|"
    "ludwig|constantine|malcolm|david|robert|pedro|victor emmanuel",
    "es": "enrique|eduardo|jorge|guillermo|carlos|jaime|ricardo|juan|luis|felipe|fernando|federico|alejandro|"
    "nicolás|pedro|pablo|pío|león|benedicto|gregorio|inocencio|clemente|urbano|alfonso|sancho|ramiro|napoleón|"
    "francisco|juan carlos",
    "fr": "henri|édouard|georges|guillaume|charles|jacques|richard|jean|louis|philippe|frédéric|ferdinand|alexandre|"
    "nicolas|pierre|paul|pie|léon|benoît|grégoire|innocent|clément|urbain|napoléon|françois|alphonse",
    "it": "enrico|edoardo|giorgio|guglielmo|carlo|giacomo|riccardo|giovanni|luigi|filippo|ferdinando|federico|"
    "alessandro|nicola|pietro|paolo|pio|leone|benedetto|gregorio|innocenzo|clemente|urbano|napoleone|francesco|"
    "alfonso|umberto|vittorio emanuele",
    "nl": "hendrik|eduard|george|willem|karel|jacobus|richard|jan|johannes|lodewijk|filips|frederik|ferdinand|"
    "alexander|nicolaas|pieter|paulus|pius|leo|benedictus|gregorius|clemens|urbanus|napoleon|alfons",
    "pt": "henrique|eduardo|jorge|guilherme|carlos|jaime|ricardo|joão|luís|filipe|fernando|frederico|alexandre|"
    "nicolau|pedro|paulo|pio|leão|bento|gregório|inocêncio|clemente|urbano|afonso|sebastião|manuel|josé|"
    "napoleão|francisco",
    "de": "ludwig|friedrich|wilhelm|karl|heinrich|otto|leopold|maximilian|joseph|josef|franz|rudolf|konrad|georg|"
    "johannes|johannes paul|benedikt|pius|gregor|innozenz|klemens|leo|paul|ferdinand|albrecht|ernst|august|"
    "friedrich wilhelm|peter|alexander|nikolaus|philipp|eduard|richard|jakob|napoleon|gustav|christian",
    "pl": "jan|kazimierz|zygmunt|władysław|bolesław|mieszko|stefan|henryk|aleksander|august|stanisław|"
    "jan kazimierz|jan paweł|benedykt|pius|leon|grzegorz|karol|ludwik|fryderyk|piotr|mikołaj|paweł|wilhelm|"
    "jerzy|edward|ryszard|filip|napoleon|franciszek",
    "sv": "karl|gustav|gustaf|erik|johan|oscar|oskar|fredrik|adolf fredrik|gustav adolf|sigismund|magnus|håkan|"
    "olof|kristian|christian|ludvig|henrik|vilhelm|wilhelm|jakob|filip|napoleon|pius|benedictus|leo|gregorius|"
    "johannes paulus|frans|edvard|georg",
    "ru": "пётр|петр|иван|николай|александр|павел|василий|фёдор|федор|борис|владимир|ярослав|генрих|людовик|"
    "карл|фридрих|вильгельм|филипп|георг|иоанн|бенедикт|пий|лев|григорий|эдуард|ричард|наполеон|франциск",
}
_FEMININE = {
    "en": "elizabeth|mary|catherine|isabella|margaret|christina|victoria|juliana|beatrix",
    "es": "isabel|juana|maría|catalina|margarita|cristina",
    "fr": "élisabeth|marie|catherine|isabelle|marguerite|christine",
    "it": "elisabetta|maria|caterina|isabella|margherita|cristina",
    "nl": "elizabeth|maria|catharina|isabella|margaretha|christina|juliana|beatrix",
    "pt": "isabel|maria|catarina|margarida|cristina",
    "de": "elisabeth|katharina|maria|margarete|christina|viktoria|isabella",
    "pl": "elżbieta|katarzyna|maria|anna|jadwiga|krystyna|wiktoria|izabela",
    "ru": "екатерина|елизавета|анна|мария|виктория|изабелла",
    "sv": "elizabeth|elisabet|kristina|margareta|ulrika eleonora|victoria|viktoria|maria",
}
# Turkish writes the numeral before what it numbers, with the ordinal's dot: "II. Mehmet" ikinci mehmet,
# "XIX. yüzyıl" on dokuzuncu yüzyıl; a lone "I." only before these words (an initial elsewhere).
_TURKISH_ONE_BEFORE = (
    "dünya|selim|mehmet|murat|ahmet|mahmut|abdülhamit|abdülhamid|süleyman|bayezid|beyazıt|osman|mustafa|"
    "yüzyıl|bölüm|kitap|cilt|perde|sahne|lig|meclis|ordu|kolordu"
)
# Russian and Polish headings: an ordinal in the heading's gender (глава третья, том второй, część druga,
# rozdział trzeci).
_SLAVIC_HEADINGS = {
    "ru": {
        **dict.fromkeys("глава часть книга статья серия сцена лекция".split(), "fem"),
        **dict.fromkeys("том раздел сезон акт эпизод урок этап параграф".split(), "nom"),
    },
    "pl": {
        **dict.fromkeys("część księga scena lekcja seria".split(), "fem"),
        **dict.fromkeys("rozdział tom akt sezon odcinek etap artykuł paragraf".split(), "nom"),
    },
}
# Russian and Polish centuries, read in the noun's case: "XX век" двадцатый век, "в XIX веке" в
# девятнадцатом веке, "XIX века" девятнадцатого века; "XX wiek", "w XIX wieku", "z XVIII wieku".
_SLAVIC_CENTURY = {
    "ru": {"век": "nom", "века": "gen", "веке": "loc", "веков": "gen"},
    "pl": {"wiek": "nom", "wieku": "gen", "wieków": "gen"},
}
# German prepositions before a regnal name, by the case they ask of the article and ordinal; the
# nominative (der vierzehnte, die zweite) elsewhere. (masculine article, ending, feminine article, ending)
_GERMAN_CASE = {
    **dict.fromkeys("mit von zu bei nach aus seit vor unter gegenüber".split(), ("dem", "n", "der", "n")),
    **dict.fromkeys("für durch gegen ohne um".split(), ("den", "n", "die", "")),
}
_GERMAN_NOMINATIVE = ("der", "", "die", "")
_GERMAN_GENITIVE = ("des", "n", "der", "n")  # die Zeit Ludwigs XIV.: ludwigs des vierzehnten
_WORD_BEFORE = re.compile(r"([^\W\d_]+)\s+$")

# French and Italian centuries and the like: "le xixe siècle", "il xxi secolo", "il secolo xx".
_ORDINAL_NOUNS = {
    "fr": "siècles?|arrondissement|république|empire|millénaire|dynastie|législature|olympiade|régiment",
    "it": "secolo|secoli|millennio|repubblica|dinastia|legislatura",
}
_CENTURY_BEFORE = {"it": "secolo|millennio|legislatura", "pt": "século|séculos|milénio|milênio"}

_CLAUSE_END = r"(?=[ \t]*(?:[.,;:!?)\]\"'\n]|$))"
# "world war i": no pronoun follows these words.
_ALWAYS_I = {"en": "world war"}


def _numeral(letters: str) -> str:
    # Two letters or more, "v" or "x" alone, "i" alone only before a clause's end (not "in part i think").
    return rf"(?:[{letters}]{{2,}}|[vx]|i{_CLAUSE_END})\b"


def _regnal(number: int, language: str, feminine: bool, before: str = "") -> str:
    """A monarch's number as the language says it: the eighth, segundo (a cardinal past ten in Spanish
    and Portuguese), quatorze (premier for one in French), de achtste, der achte (dem achten after
    "unter", `before`), первый, pierwszy."""
    if language in ("ru", "pl"):
        return slavic_ordinal(number, language, "fem" if feminine else "nom")
    if language == "sv":  # den förste, den andre for a king; den första, den andra for a queen
        said = {1: "förste", 2: "andre"}.get(number) if not feminine else None
        return "den " + (said or number_words(number, language, to="ordinal"))
    if language == "de":
        case = _GERMAN_GENITIVE if before == "genitive" else _GERMAN_CASE.get(before, _GERMAN_NOMINATIVE)
        masculine, ending, female, female_ending = case
        said = number_words(number, language, to="ordinal")
        return f"{female} {said}{female_ending}" if feminine else f"{masculine} {said}{ending}"
    if language == "fr":
        return ("première" if feminine else "premier") if number == 1 else number_words(number, language)
    if language in ("es", "pt") and number > 10:
        return number_words(number, language)
    said = number_words(number, language, to="ordinal")
    if feminine and language in ("es", "pt", "it"):
        said = re.sub(r"o\b", "a", said)
    return {"en": "the ", "nl": "de "}.get(language, "") + said


@functools.cache  # built once per language, not for each sentence spoken
def roman_reader(language: Optional[str]) -> Optional[Callable[[str], str]]:
    """What reads the Roman numerals of a lowered text in `language` (an espeak-ng code), or None."""
    primary = (language or "").lower().split("-")[0]
    if primary not in _HEADINGS and primary not in _NAMES and primary != "tr":
        return None
    passes: list[tuple[re.Pattern, Callable[[re.Match], str]]] = []

    def cardinal(match: re.Match) -> str:
        number = _value(match.group(2))
        if number is None:
            return match.group(0)
        if match.group(1).startswith("sécul") and number <= 10:  # século quinto
            return f"{match.group(1)} {number_words(number, primary, to='ordinal')}"
        return f"{match.group(1)} {number_words(number, primary)}"

    if primary in _HEADINGS:
        passes.append((re.compile(rf"\b({_HEADINGS[primary]})\s+({_numeral('ivxlc')})(?![^\W\d_])"), cardinal))
    passes += _slavic_passes(primary)
    if primary in _ALWAYS_I:
        passes.append((re.compile(rf"\b({_ALWAYS_I[primary]})\s+(i)\b(?![^\W\d_])"), cardinal))
    if primary in _CENTURY_BEFORE:
        century = re.compile(rf"\b({_CENTURY_BEFORE[primary]})\s+({_numeral('ivx')})(?![^\W\d_])")
        # il secolo xx: il secolo ventesimo; século xxi: século vinte e um (século quinto up to ten)
        passes.append((century, (lambda m: _ordinal_after(m, primary)) if primary == "it" else cardinal))
    if primary in _ORDINAL_NOUNS:
        suffix = "(?:e|ème|er|re)" if primary == "fr" else ""
        # Only i, v and x: "le siècle", "ce siècle" are not fifty and a hundred.
        before_noun = re.compile(rf"\b([ivx]+){suffix}\s+(?=(?:{_ORDINAL_NOUNS[primary]})\b)")
        passes.append((before_noun, lambda m: _ordinal_before(m, primary)))
    passes += _name_passes(primary)
    if primary == "tr":
        passes.append(
            (
                re.compile(rf"\b([ivx]{{2,}}|[vx]|i(?=\.\s+(?:{_TURKISH_ONE_BEFORE})\b))\.\s+(?=[^\W\d_])"),
                lambda m: _ordinal_before(m, primary),
            )
        )
    # Most sentences hold no numeral but the pronoun "i": skip every pass for them.
    single = r"i\b" if primary == "ru" else rf"i{_CLAUSE_END}"
    quick = re.compile(rf"\b(?:[ivxlc]{{2,}}|[vx]|{single}|world war i|ier|ire)(?:er|re|e|ème)?\b")

    def read(text: str) -> str:
        if not quick.search(text):
            return text
        for pattern, said in passes:
            text = pattern.sub(said, text)
        return text

    return regional(language, read)


# English, before the text is lowered: a numeral of two letters or more after a capitalised word that
# names no monarch nor heading numbers a title or a mission ("Artemis II", "Rocky III", "Apollo XI").
# The capitals tell it from a word; a name from _NAMES keeps its regnal reading, read later.
_TITLE_NUMERAL = re.compile(r"\b([A-Z][a-z]+)([ \t]+)([IVX]{2,})\b(?=['\u2019]s\b|(?![\w'\u2019-]))")
_CENTURY_NUMERAL = re.compile(r"\b([IVX]+)(?=[ \t]+centur(?:y|ies)\b)")  # the XIX century: the nineteenth
_ENGLISH_KEPT = frozenset(f"{_NAMES['en']}|{_FEMININE['en']}|iv|vi|xx|xxx".split("|"))
# A ruler's title before a name the lists lack: its numeral is regnal.
_QUEENS = frozenset("Queen Empress Princess Tsarina Czarina Sultana".split())
_RULERS = frozenset("King Pharaoh Tsar Czar Shah Emperor Pope Prince Sultan Emir Kaiser Duke".split()) | _QUEENS
# Not a title's word before a numeral: "The IV bag", "Start IV fluids", "Use VI", "Our XIV edition".
_NO_TITLE = frozenset(
    "The A An Our Your My His Her Their Its This That These Those Use Start Give Hang Check Insert Attach Get And "
    "Or Of In On At To For With By From Buy See Run Open".split()
)


def title_numerals(text: str) -> str:
    """`text` (English, in its capitals) with a title's Roman number in words: "Artemis two"."""
    if not any(c.islower() for c in text) or not re.search(r"\b[IVX]+\b", text):
        return text

    def said(match: re.Match) -> str:
        number = _value(match.group(3).lower())
        before = _WORD_BEFORE.search(match.string, 0, match.start())  # Victor Emmanuel III, Juan Carlos I
        named = {match.group(1).lower(), f"{before.group(1)} {match.group(1)}".lower() if before else ""}
        kept = bool(named & _ENGLISH_KEPT) or match.group(3).lower() in _ENGLISH_KEPT
        if number is None or kept or match.group(1) in _NO_TITLE:
            return match.group(0)
        if before and before.group(1) in _RULERS:  # King Abdullah II, Pharaoh Thutmose III: regnal
            return f"{match.group(1)}{match.group(2)}{_regnal(number, 'en', before.group(1) in _QUEENS)}"
        return f"{match.group(1)}{match.group(2)}{number_words(number, 'en')}"

    def century(match: re.Match) -> str:
        number = _value(match.group(1).lower())
        return match.group(0) if number is None else number_words(number, "en", to="ordinal")

    return _TITLE_NUMERAL.sub(said, _CENTURY_NUMERAL.sub(century, text))


def _slavic_passes(primary: str) -> list[tuple[re.Pattern, Callable[[re.Match], str]]]:
    """Russian and Polish headings (an ordinal in the heading's gender) and centuries (in the noun's case)."""
    passes: list[tuple[re.Pattern, Callable[[re.Match], str]]] = []
    if primary in _SLAVIC_HEADINGS:
        forms = _SLAVIC_HEADINGS[primary]
        # Polish "ci" and "i" are words ("ta część ci się spodoba"): i, v and x only, a lone i at a clause's end.
        numeral = r"[ivxlc]+\b" if primary == "ru" else _numeral("ivx")
        heading = re.compile(rf"\b({'|'.join(forms)})\s+({numeral})(?![^\W\d_])")

        def slavic_heading(match: re.Match) -> str:
            number = _value(match.group(2))
            if number is None:
                return match.group(0)
            return f"{match.group(1)} {slavic_ordinal(number, primary, forms[match.group(1)])}"

        passes.append((heading, slavic_heading))
    if primary in _SLAVIC_CENTURY:
        nouns = _SLAVIC_CENTURY[primary]
        # No lone Polish "i" (and): "płeć i wiek" is sex and age.
        numeral = "[ivx]+" if primary == "ru" else "[ivx]{2,}|[vx]"
        century = re.compile(rf"\b((?:в|w)\s+)?({numeral})\s+(?=({'|'.join(nouns)})\b)")

        def slavic_century(match: re.Match) -> str:
            number = _value(match.group(2))
            if number is None:
                return match.group(0)
            form = "loc" if match.group(1) and nouns[match.group(3)] == "gen" else nouns[match.group(3)]
            return f"{match.group(1) or ''}{slavic_ordinal(number, primary, form)} "

        passes.append((century, slavic_century))
    return passes


def _name_passes(primary: str) -> list[tuple[re.Pattern, Callable[[re.Match], str]]]:
    """A monarch's or pope's number after a name from `primary`'s list."""
    if primary not in _NAMES:
        return []
    passes: list[tuple[re.Pattern, Callable[[re.Match], str]]] = []
    # Russian has no pronoun "i": "пётр i основал". German writes the ordinal's dot ("Ludwig XIV. war"),
    # read with the numeral where the sentence goes on.
    numeral = r"(?:[ivx]{2,}|[vx]|i)\b" if primary == "ru" else _numeral("ivx")
    suffix = {"fr": r"(?P<suffix>er|re)?", "de": r"(?P<suffix>\.(?=[ \t]+[^\W\d_]))?"}.get(primary, "")
    genitive = "(?P<genitive>s?)" if primary == "de" else ""  # die Zeit Ludwigs XIV.
    names = re.compile(
        rf"\b(?P<name>{_NAMES[primary]}|{_FEMININE[primary]}){genitive}\s+(?P<numeral>{numeral}){suffix}"
        r"(?![^\W\d_])"
    )
    feminine = frozenset(_FEMININE[primary].split("|"))

    def regnal(match: re.Match) -> str:
        found = match.groupdict()
        number = _value(found["numeral"])
        if number is None or (primary == "fr" and found.get("suffix") and number != 1):
            return match.group(0)
        if primary == "en" and found["name"] == "malcolm" and found["numeral"] == "x":  # Malcolm X, a man's name
            return match.group(0)
        before = _WORD_BEFORE.search(match.string, 0, match.start())
        case = "genitive" if found.get("genitive") else before.group(1) if before else ""
        said = _regnal(number, primary, found["name"] in feminine, case)
        return f"{found['name']}{found.get('genitive') or ''} {said}"

    passes.append((names, regnal))
    if primary == "fr":  # François Ier, Napoléon Ier: the first
        first = rf"\b(?P<name>{_NAMES[primary]}|{_FEMININE[primary]})\s+(?P<numeral>i)(?P<suffix>er|re)\b"
        passes.append((re.compile(first), regnal))
    return passes


def _ordinal_after(match: re.Match, language: str) -> str:
    number = _value(match.group(2))
    return match.group(0) if number is None else f"{match.group(1)} {number_words(number, language, to='ordinal')}"


def _ordinal_before(match: re.Match, language: str) -> str:
    number = _value(match.group(1))
    return match.group(0) if number is None else number_words(number, language, to="ordinal") + " "
