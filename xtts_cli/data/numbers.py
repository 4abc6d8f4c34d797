"""Numbers read as words before the vocabulary or espeak-ng meets them (`data/text.py`
`language_normalizer`): "It costs $1,999" -> "it costs one thousand nine hundred and ninety nine dollars".

num2words (pure Python, many languages) writes the words; Persian keeps its own reader
(`persian.py`), which also reads Persian digits. English also reads currency, ordinals ("3rd"),
percentages, years ("in 1999" -> "in nineteen ninety nine"), decades, times, fractions and "&", as Keith Ito's
`english_cleaners` in the original Tacotron did with `inflect`, and dates, units, durations, codes,
addresses (example.com: example dot com) and the symbols around numbers. The other languages read
their own separators (1.999,50), "%", money, ordinals, times of day, metric units and dates, as each
writes and says them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Optional

from xtts_cli.data.agreement import agree, german_neuter

__all__ = ["number_reader", "number_words", "regional", "slavic_ordinal", "superscript_powers"]

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_DIGIT = re.compile(r"\d")
_CURRENCY = {"$": ("dollar", "dollars", "cent", "cents"), "£": ("pound", "pounds", "penny", "pence")}
_CURRENCY["€"] = ("euro", "euros", "cent", "cents")
_CURRENCY["¥"] = ("yen", "yen", "sen", "sen")
_CURRENCY["₹"] = ("rupee", "rupees", "paisa", "paise")
_MONEY = re.compile(r"([$£€¥₹])\s?(\d[\d,]*)(?:\.(\d{1,2}))?\b")
# "5 €", "9.99€": the sign after the amount, as much of Europe writes it; read as if before it.
_MONEY_AFTER = re.compile(r"(?<![\d.,])(\d[\d,]*(?:\.\d{1,2})?)\s?([$£€¥₹])(?![\w$£€¥₹]|\s?\d)")
# "$5 million", "$1.5bn", "$10k": the scale before the currency, the point read as a point.
_SCALED_MONEY = re.compile(
    r"([$£€¥₹])\s?(\d[\d,]*(?:\.\d+)?)(?:\s+(thousand|million|billion|trillion)|\s?(k|m|mn|bn|b|tn))\b", re.IGNORECASE
)
_SCALES = {"k": "thousand", "m": "million", "mn": "million", "b": "billion", "bn": "billion", "tn": "trillion"}
# Thousands grouped by a space, as SI and the style guides that follow it write them: 100 000.
_SPACED_THOUSANDS = re.compile(r"\b\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![.,]?\d)")
_DURATION = re.compile(r"\b(\d{1,2}):([0-5]\d):([0-5]\d)(?!\d|:\d)")  # 2:30:15: hours, minutes, seconds
# A date: "4 July 1976" is the fourth of July nineteen seventy six, "July 4, 1976" July fourth, nineteen
# seventy six; a year after its month is read as one (14 October 1066: ten sixty six).
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DAY = r"([12]?\d|3[01])(?:st|nd|rd|th)?"
# A plural noun after a number makes it a count ("in December 2 people died", "May 3 times"); a verb
# ending in s does not ("January 1 is", "May 4 was").
COUNTED = r"(?:(?!(?:is|was|has|does|this|thus|plus|us|as|its)\b)[^\W\d_]+s|people)"
# "4-5 June": a range of days before their month, each an ordinal (not "four to the fifth of June").
_DAY_RANGE_BEFORE_MONTH = re.compile(
    rf"(?<![\d.,/])([1-9]|[12]\d|3[01])\s?[-\u2013]\s?([1-9]|[12]\d|3[01])(?:st|nd|rd|th)?\s+(?=(?:{_MONTHS})\b)",
    re.IGNORECASE,
)
_DATE = re.compile(
    rf"\b(?:{_DAY}\s+({_MONTHS})|({_MONTHS})\s+{_DAY}\b(?!:\d)|({_MONTHS}))(?:(,?\s+)(1\d\d\d|20\d\d)(?![\d,.]\d))?",
    re.IGNORECASE,
)
# Units after a number, as they are said: 5 kg is five kilograms, 60 km/h sixty kilometers per hour.
_UNIT_NAMES = {
    "km/h": "kilometer per hour",
    "kph": "kilometer per hour",
    "mph": "mile per hour",
    "km": "kilometer",
    "cm": "centimeter",
    "mm": "millimeter",
    "kg": "kilogram",
    "mg": "milligram",
    "g": "gram",
    "cup": "cup",  # for its fractions: 1/3 cup is a third of a cup
    "tbsp": "tablespoon",
    "tsp": "teaspoon",
    "ml": "milliliter",
    "lb": "pound",
    "lbs": "pound",
    "fl oz": "fluid ounce",
    "oz": "ounce",
    "m\u00b2": "square meter",
    "km\u00b2": "square kilometer",
    "cm\u00b2": "square centimeter",
    "ft\u00b2": "square foot",
    "m\u00b3": "cubic meter",
    "cm\u00b3": "cubic centimeter",
    "sq ft": "square foot",
    "sq mi": "square mile",
    "sq km": "square kilometer",
    "ft": "foot",
    "yd": "yard",
    "yds": "yard",
    "mi": "mile",
    "qt": "quart",
    "gal": "gallon",
    "kwh": "kilowatt hour",
    "kw": "kilowatt",
    "hz": "hertz",
    "khz": "kilohertz",
    "mhz": "megahertz",
    "ghz": "gigahertz",
    "kb": "kilobyte",
    "mb": "megabyte",
    "gb": "gigabyte",
    "tb": "terabyte",
    "ms": "millisecond",
    "sec": "second",
    "secs": "second",
    "min": "minute",
    "mins": "minute",
    "hr": "hour",
    "hrs": "hour",
    "wk": "week",
    "wks": "week",
    "mo": "month",
    "mos": "month",
    "yr": "year",
    "yrs": "year",
    "kb/s": "kilobyte per second",
    "mb/s": "megabyte per second",
    "gb/s": "gigabyte per second",
    "kbps": "kilobit per second",
    "mbps": "megabit per second",
    "gbps": "gigabit per second",
}
# "250 g" is grams, "30 m" meters, "2 l" liters; "5g" (a network) and "1.2m" (a million) are not, so
# those only after a space.
_SPACED_UNITS = ("g", "m", "l")
_UNIT_NAMES.update({"m": "meter", "l": "liter"})
_UNIT = re.compile(
    r"(?<!/)\b((?:\d+\s+)?[1-9]/\d\d?|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:\s?("
    + "|".join(u for u in _UNIT_NAMES if u not in _SPACED_UNITS)
    + r")|\s("
    + "|".join(_SPACED_UNITS)
    + r"))(?![^\W_]|/)",
    re.IGNORECASE,
)
_UNIT_PLURALS = {"foot": "feet", "hertz": "hertz"}
# 400m hurdles, the 100m final: meters, not millions ("four hundred million hurdles" had been said).
_METERS_BEFORE = re.compile(
    r"(?<![\d.,$£€¥₹])(\d+)m\b(?=\s+(?:hurdles|relay|sprint|dash|freestyle|backstroke|breaststroke|butterfly"
    r"|medley|individual|steeplechase|race|final|heats?|run|swim|record|event|title|gold|silver|bronze)\b)",
    re.IGNORECASE,
)
# 200g of chocolate, 2l of water: the measure of something (written unspaced, g and l are left alone).
_MEASURE_OF = re.compile(r"(?<![\d.,$£€¥₹])(\d+(?:\.\d+)?)(g|l)(?=\s+of\b)", re.IGNORECASE)
# Timed out after 30s: seconds where a span of time is asked for ("in her 30s" stays an age).
_SECONDS_AFTER = re.compile(
    r"\b((?:after|every|within|took|takes|waited|wait|timeout|timeout of|timeout to) (\d{1,3}(?:\.\d+)?))s\b",
    re.IGNORECASE,
)
# $2.99/mo, 5 GB/day read as "per" before its unit's name ("per mo" had been left).
_PER_UNIT = re.compile(
    r"\bper ("
    + "|".join(re.escape(u) for u in _UNIT_NAMES if len(u) > 1 and not re.search(r"[\s/\u00b2\u00b3]", u))
    + r")\b",
    re.IGNORECASE,
)
_ARTICLE_BEFORE = re.compile(r"\b(?:a|an)\s+$", re.IGNORECASE)
# A web or mail address as it is said: www.example.com/docs is "w w w dot example dot com slash docs",
# jo.doe@mail.com "jo dot doe at mail dot com"; the scheme (https://) is not said.
_ADDRESS = re.compile(
    r"(?:https?://|\bwww\.)[^\s]*[^\s.,;:!?)\]'\"]"
    r"|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|edu|gov|io|ai|dev|app|info|co\.uk|uk|de|fr|eu)\b(?::\d{1,5}\b)?(?:/[^\s]*[^\s.,;:!?)])?",
    re.IGNORECASE,
)
_ENGLISH_WORK = re.compile(r"[\d&@]|\w\.\w|\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s?[-\u2013]", re.IGNORECASE)
_ADDRESS_MARKS = {
    ".": " dot ",
    "@": " at ",
    "/": " slash ",
    "-": " dash ",
    "_": " underscore ",
    "+": " plus ",
    "?": " question mark ",  # a query: docs?id=5
    "=": " equals ",
    "&": " and ",
    ":": " colon ",  # a port: example.com:8080
    "#": " hash ",
    "%": " percent ",
    "~": " tilde ",
}


def _address(match: re.Match) -> str:
    address = re.sub(r"^https?://", "", match.group(0), flags=re.IGNORECASE).rstrip("/")
    address = re.sub(r"^www\.", "w w w.", address, flags=re.IGNORECASE)
    said = "".join(_ADDRESS_MARKS.get(c, c) for c in address)
    return re.sub(r"\s+", " ", said).strip()


# Symbols read as words: ±2 (plus or minus two), #1 and No. 1 (number one), 100+ (one hundred plus),
# 3x faster (three times), 1920x1080 (by).
_SYMBOLS = (
    (re.compile(r"\u00b1\s?"), "plus or minus "),
    (re.compile(r"(?:#|\bno\.)\s?(?=\d)", re.IGNORECASE), "number "),
    (re.compile(r"\u00a7\u00a7\s?(?=\d)"), "sections "),
    (re.compile(r"\u00a7\s?(?=\d)"), "section "),
    (re.compile(r"(?<=\d)\s?\+(?!\s?\d)"), " plus"),
    # +3, a gain or a temperature: its sign said (it had been left out, "it went three"); 2+2 read as a sum.
    (re.compile(r"(?<![\w.,+\-\u2212])\+(?=\d)"), "plus "),
    (re.compile(r"(?<=\d)\s?\+\s?(?=\d)"), " plus "),
    (re.compile(r"(?<=\d)\s?x\s?(?=\d)", re.IGNORECASE), " by "),
    # Not a variable's power after its coefficient ("12 x^2", "3x²": twelve x squared, not "times squared").
    (
        re.compile(
            r"(?<=\d)\s?x\b(?!\^|\*\*|[\u00b2\u00b3\u00b9\u2070\u2074-\u2079]|\s(?:squared|cubed|to the (?:power|nth|\d+(?:st|nd|rd|th)?|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\b))",
            re.IGNORECASE,
        ),
        " times",
    ),
)
# Powers: x^2 (x squared), 10^6 and 2**10 (ten to the power of six), 1.5x10^6 (times ten, not "by").
_POWER = re.compile(r"(?:(?<=[^\W_])|(?<=\)))\s?(?:\^|\*\*)\s?([-\u2212]?)(\d+)(?![\d.,]\d)")
# x², 10²³, 2⁻¹: a power written in superscripts, as `_POWER` reads x^2. Made so before the cleaners,
# whose NFKC had made x² "x two" and 10²³ ten's digits and the exponent's one number (a thousand and
# twenty three); English then reads 50 m^2 as its unit (`_SQUARE_UNIT`): fifty square meters. Not an
# ion's charge (Ca²⁺, SO₄²⁻: NFKC's "two plus" as before), nor a footnote's mark (`_footnote`).
_SUPERSCRIPTS = "\u2070\u00b9\u00b2\u00b3\u2074-\u2079"
_SUPERSCRIPT = re.compile(
    rf"(?:(?<=[^\W_])|(?<=\)))([\u207a\u207b]?)([{_SUPERSCRIPTS}]+)(?![{_SUPERSCRIPTS}\u207a\u207b])"
)
# The word a superscript follows: a footnote's mark after a word of three letters or more ("the study²³
# found"), or a letter's ¹, unless that word is a function (sin²θ) or a unit after its slash (ft/sec²).
_WORD_BEFORE = re.compile(r"(/?)([^\W\d_\u2070-\u209f\u00b2\u00b3\u00b9]*)$")
_POWERED_WORDS = frozenset("sin cos tan sec csc cot sinh cosh tanh log exp".split())
_MARK_AFTER_PUNCTUATION = re.compile(rf"(?<=[,.;:!?\"'\u201d\u2019])[{_SUPERSCRIPTS}]+")  # "as reported,³ then"
# m², km², cm³ in the languages that say them as one word or with an adjective, the singular after 1.
_SQUARE_UNITS = {
    "de": {"\u00b2": ("Quadrat", "Quadrat"), "\u00b3": ("Kubik", "Kubik")},
    "fr": {"\u00b2": (" carré", " carrés"), "\u00b3": (" cube", " cubes")},
    "es": {"\u00b2": (" cuadrado", " cuadrados"), "\u00b3": (" cúbico", " cúbicos")},
    "it": {"\u00b2": (" quadrato", " quadrati"), "\u00b3": (" cubo", " cubi")},
    "pt": {"\u00b2": (" quadrado", " quadrados"), "\u00b3": (" cúbico", " cúbicos")},
}
_UNIT_WORDS = {
    "de": {"m": ("Meter", "Meter"), "km": ("Kilometer", "Kilometer"), "cm": ("Zentimeter", "Zentimeter")},
    "fr": {"m": ("mètre", "mètres"), "km": ("kilomètre", "kilomètres"), "cm": ("centimètre", "centimètres")},
    "es": {"m": ("metro", "metros"), "km": ("kilómetro", "kilómetros"), "cm": ("centímetro", "centímetros")},
    "it": {"m": ("metro", "metri"), "km": ("chilometro", "chilometri"), "cm": ("centimetro", "centimetri")},
    "pt": {"m": ("metro", "metros"), "km": ("quilómetro", "quilómetros"), "cm": ("centímetro", "centímetros")},
}
_UNIT_WORDS["de"]["mm"], _UNIT_WORDS["fr"]["mm"] = ("Millimeter", "Millimeter"), ("millimètre", "millimètres")
_UNIT_WORDS["es"]["mm"], _UNIT_WORDS["it"]["mm"] = ("milímetro", "milímetros"), ("millimetro", "millimetri")
_UNIT_WORDS["pt"]["mm"] = ("milímetro", "milímetros")
# After its number or alone ("€/m²", "pro m²": per one).
_AREA = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)?\s?)?(?<![^\W\d_])(km|cm|mm|m)([\u00b2\u00b3])(?![\w\u207a\u207b])")
_SUPERSCRIPT_DIGITS = str.maketrans("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079", "0123456789")
_SQUARE_UNIT = re.compile(r"(?<=\d)(\s?)(m|km|cm|ft)\^([23])(?!\d)")
# 1e6, 2.5E-3: a number's scientific notation, read as the power of ten it writes (one times ten to
# the power of six), not as its letter ("one e six"). Not inside a word or a hexadecimal (0x1e6).
_SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([-+\u2212]?)(\d{1,3})(?![\w.]|\.\d)")
_TIMES_TEN = re.compile(r"(?<=\d)\s?[x\u00d7*]\s?(?=10\s?(?:\^|\*\*))", re.IGNORECASE)


# The other languages' word between a base and its exponent: zehn hoch sechs, dix puissance six.
_POWER_WORDS = {
    "de": "hoch",
    "es": "elevado a",
    "fr": "puissance",
    "it": "elevato a",
    "pt": "elevado a",
    "sv": "upph\u00f6jt till",
    "tr": "\u00fczeri",
}


# Languages that write an ordinal as its number and a full stop (2. plass, 2. helyen, 2. miejsce, 1. mai),
# as written, before the cleaners lower it: one before a word in lower case, which no sentence starts with,
# is an ordinal (it had been read as the number, and its full stop as a sentence's end). Each reader's
# ordinal is its only or masculine form (Polish drugi before any noun: the noun's gender and case are not
# read); up to 99, where num2words' Danish and Norwegian ordinals are right. German and Turkish read their
# own (by the words around them).
_DOTTED_ORDINAL_LANGUAGES = {"hu": "hu", "nb": "no", "no": "no", "da": "da", "fi": "fi", "pl": "pl", "sl": "sl"}
# ... and those whose number's full stop before a word in lower case ends no sentence ("W 1999. roku",
# Hungarian "2024. május 1-jén"), whether or not a reader reads their ordinals.
DOTTED_NUMBER_LANGUAGES = frozenset(_DOTTED_ORDINAL_LANGUAGES) | {"cs", "sk", "hr", "sr", "bs", "et", "lv", "is"}
_DOTTED_ORDINAL = re.compile(r"(?<![\w.,:/])([1-9]\d?)\.(?=[ \t]+([^\W\d_]))")
# A year's full stop before a word in lower case is its spelling's (Hungarian "2024. május 1."): no pause.
_DOTTED_YEAR = re.compile(r"(?<![\w.,:/])(1\d{3}|20\d\d)\.(?=[ \t]+([^\W\d_]))")


# Words that start a clause and follow no ordinal: before one, the number is a count whose sentence
# ended, typed on in lower case ("Mam 5. ty też?", "Jeg har 3. de andre").
_NO_ORDINAL_BEFORE = {
    "pl": "ja ty on ona ono my wy oni one a i ale to że więc potem bo czy się mieszkanie m",
    "da": "jeg du han hun den det vi i de der og men så",
    "no": "jeg du han hun den det vi dere de der og men så",
    "hu": "én te ő mi ti ők és de se is az a ez",
    "fi": "minä sinä hän se me te he ja mutta niin",
    "sl": "jaz ti on ona ono mi vi oni in pa ampak ki",
}
_PAIRED_ORDINAL = re.compile(r"[ \t]+(?:og|i|oraz|lub|albo|és|vagy|ja|tai|in|ali|eller)[ \t]+[1-9]\d?\.[ \t]+[^\W\d_]")
_SLOVENE_MONTHS_OF = "januarja februarja marca aprila maja junija julija avgusta septembra oktobra novembra decembra"
# A month in the genitive after the day: Polish reads "1 maja" itself (pierwszego maja).
_POLISH_MONTHS_OF = "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia"
_HUNGARIAN_MONTHS = "január február március április május június július augusztus szeptember október november december"


def dotted_ordinals(text: str, language: str) -> str:
    """`text` with each number written as an ordinal ("2. plass") in words, in a language that writes them so."""
    primary = language.lower().split("-")[0]
    if primary == "hu" and "-" in text:
        text = _HUNGARIAN_DAY.sub(_hungarian_days, text)
    if primary not in DOTTED_NUMBER_LANGUAGES or "." not in text:
        return text
    text = _DOTTED_YEAR.sub(lambda m: m.group(1) if m.group(2).islower() else m.group(0), text)
    code = _DOTTED_ORDINAL_LANGUAGES.get(primary)
    return text if code is None else _DOTTED_ORDINAL.sub(lambda m: _dotted_ordinal(m, code), text)


def _dotted_ordinal(match: re.Match, code: str) -> str:
    number, after = int(match.group(1)), re.match(r"[^\W\d_]+", match.string[match.end() :].lstrip())
    word = after.group(0) if after else ""
    before = re.search(r"([^\W\d_]+)(\.?)\s*$", match.string[: match.start()])
    month = before.group(1).lower() if before is not None else ""
    day = code == "hu" and (
        month in _HUNGARIAN_MONTHS.split()
        or (before is not None and before.group(2) and month in _HUNGARIAN_MONTHS_SHORT.split())
    )
    # The first of a pair is one: "1. og 2. klasse", "1. i 2. klasy".
    paired = _PAIRED_ORDINAL.match(match.string, match.end()) is not None
    if not word[:1].islower() or (word in _NO_ORDINAL_BEFORE[code].split() and not day and not paired):
        return match.group(0)
    if code == "pl" and word in _POLISH_MONTHS_OF.split():
        return match.group(1)  # the date's reader: pierwszego maja
    if code == "sl" and word in _SLOVENE_MONTHS_OF.split():  # a day before its month: prvega maja
        return re.sub(r"i$", "ega", _words(number, code, to="ordinal"))
    said = _danish_ordinal(number) if code == "da" else _words(number, code, to="ordinal")
    said = "trettende" if code == "no" and number == 13 else said  # num2words: "trettførste"
    return _hungarian_day(number) if day else said


def _hungarian_day(number: int, ending: str = "") -> str:
    """A day of the month: március 15. is tizenötödike, május 1. elseje; with the case ending written
    after its hyphen (15-én, 1-jétől, 10-ig, 4-re, 15-ét) the day's vowel is long before it and the
    ending's own in harmony with the day's (tizenötödikén, elsejétől, tizedikéig, másodikára); 15-i,
    the day's adjective, is tizenötödikei."""
    said = _words(number, "hu", to="ordinal")
    vowel = next((c for c in reversed(said.removesuffix("ik")) if c in "aáeéiíoóöőuúüű"), "e")
    said = "elseje" if said == "első" else said + ("a" if vowel in "aáoóuú" else "e")
    rest = ending.lower().lstrip("j")
    rest = rest[1:] if rest[:1] in ("e", "é", "a", "á") else rest
    if not rest:
        return said
    if rest == "i":
        return said + "i"
    front = said.endswith("e")
    for back_form, front_form in _HUNGARIAN_HARMONY:
        if rest in (back_form, front_form):
            rest = front_form if front else back_form
    return said[:-1] + ("é" if front else "á") + rest


_HUNGARIAN_HARMONY = (("tól", "től"), ("ról", "ről"), ("ra", "re"), ("val", "vel"), ("hoz", "hez"), ("ból", "ből"))
_HUNGARIAN_MONTHS_SHORT = "jan febr márc ápr máj jún júl aug szept okt nov dec"
# A day after its month with its case ending after a hyphen, as Hungarian writes its dates: "március
# 15-én", "május 1-jétől 3-áig", "márc. 15-i", and the days listed after it ("15-én, 16-án és 17-én").
# (The number alone had been read on to its ending.) A day listed after a comma or és is written with
# the day's long vowel (16-án): "15-én 8-tól 12-ig" and "15-én, 10-en" are hours and a count after it.
_HUNGARIAN_DAY_NUMBER = r"(?:3[01]|[12]\d|[1-9])-"
_HUNGARIAN_ENDINGS = r"(?:n|ig|t[őó]l|r[ae]|r[őó]l|h[eo]z|v[ae]l|b[őó]l|t)"
_HUNGARIAN_FIRST_DAY = rf"{_HUNGARIAN_DAY_NUMBER}(?:j?[eéaá]?(?:{_HUNGARIAN_ENDINGS}|i)|j?[ea])\b"
_HUNGARIAN_LISTED_DAY = rf"{_HUNGARIAN_DAY_NUMBER}(?:j?[éá]{_HUNGARIAN_ENDINGS}|j?[ea]i?)\b"
_HUNGARIAN_UNTIL = rf"(?:(?<=t[őó]l)\s+{_HUNGARIAN_DAY_NUMBER}(?:j?[éá])?ig\b)?"  # 5-től 10-ig
_HUNGARIAN_DAY = re.compile(
    rf"\b((?:{_HUNGARIAN_MONTHS.replace(' ', '|')}|(?:{_HUNGARIAN_MONTHS_SHORT.replace(' ', '|')})\.)\s*)"
    rf"({_HUNGARIAN_FIRST_DAY}{_HUNGARIAN_UNTIL}"
    rf"(?:(?:,\s*|\s+(?:és|vagy)\s+){_HUNGARIAN_LISTED_DAY}{_HUNGARIAN_UNTIL})*)",
    re.IGNORECASE,
)


def _hungarian_days(match: re.Match) -> str:
    return match.group(1) + re.sub(
        r"(\d+)-(\w+)", lambda day: _hungarian_day(int(day.group(1)), day.group(2)), match.group(2)
    )


# num2words' Danish ordinals from the 30th on are no words ("tredivete"): the tens' own, after "og".
_DANISH_TENS_ORDINALS = (
    "tredivte fyrretyvende halvtredsindstyvende tresindstyvende halvfjerdsindstyvende firsindstyvende "
    "halvfemsindstyvende"
).split()
_DANISH_UNITS = ["", "en", "to", "tre", "fire", "fem", "seks", "syv", "otte", "ni"]


def _danish_ordinal(number: int) -> str:
    if number < 30:
        return _words(number, "da", to="ordinal")
    tens, units = divmod(number, 10)
    return (f"{_DANISH_UNITS[units]}og" if units else "") + _DANISH_TENS_ORDINALS[tens - 3]


def superscript_powers(text: str, language: str = "en") -> str:
    """`text` with each power written in superscripts (x², 10²³, 2⁻¹) written as x^2, as the numbers'
    readers read it; in German, French, Spanish, Italian and Portuguese 80 m² is read as their
    words (achtzig Quadratmeter, quatre-vingts mètres carrés)."""
    if not any("\u2070" <= c <= "\u2079" or c in "\u00b9\u00b2\u00b3" for c in text):
        return text
    primary = language.lower().split("-")[0]
    if primary in _SQUARE_UNITS:
        text = _AREA.sub(lambda m: _area(m, primary), text)
    return _SUPERSCRIPT.sub(_superscript, _MARK_AFTER_PUNCTUATION.sub("", text))


def _area(match: re.Match, language: str) -> str:
    number = (match.group(1) or "").strip()
    many = bool(number) and number not in ("1", "1,0", "1.0")
    power, unit = _SQUARE_UNITS[language][match.group(3)][many], _UNIT_WORDS[language][match.group(2)][many]
    said = f"{power}{unit.lower()}" if language == "de" else f"{unit}{power}"
    return f"{number} {said}" if number else said


def _superscript(match: re.Match) -> str:
    before = _WORD_BEFORE.search(match.string, 0, match.start())
    slash, word = (before.group(1), before.group(2)) if before else ("", "")
    if not match.group(1) and len(word) >= 2 and word.isupper():  # CO², NO²: CO₂ misspelt, its digit
        return match.group(2).translate(_SUPERSCRIPT_DIGITS)
    word = word.lower()
    if not match.group(1) and not slash and word not in _POWERED_WORDS:
        if len(word) >= 3 or (word and match.group(2) == "\u00b9"):
            return ""  # a footnote's mark: "the study²³ found", "Einstein¹ said"
    power = "^" + ("-" if match.group(1) == "\u207b" else "") + match.group(2).translate(_SUPERSCRIPT_DIGITS)
    after = match.string[match.end() : match.end() + 1]
    return power + (" " if after.isalpha() else "")  # x²y: x squared y


def _cents(match: re.Match) -> str:
    one = match.group(1) == "1" or _ARTICLE_BEFORE.search(match.string, 0, match.start()) is not None  # a 10¢ stamp
    return f"{_english_number(match.group(1))} {'cent' if one else 'cents'}"


def _inches(match: re.Match) -> str:
    """12 in. before a word: inches, or after "a" an inch that describes its noun (a 12 inch pizza)."""
    one = match.group(1) == "1" or _ARTICLE_BEFORE.search(match.string, 0, match.start()) is not None
    return f"{match.group(1)} {'inch' if one else 'inches'}"


def _square_unit(match: re.Match) -> str:
    return match.group(1) + match.group(2) + ("\u00b2" if match.group(3) == "2" else "\u00b3")


def _power(match: re.Match, language: str = "en") -> str:
    minus = f"{_MINUS_WORDS.get(language, 'minus')} " if match.group(1) else ""
    apart = " " if match.string[match.end() : match.end() + 1].isalpha() else ""  # 6x^2y: six x squared y
    if language != "en":
        return f" {_POWER_WORDS[language]} {minus}{_words(int(match.group(2)), language)}{apart}"
    if not match.group(1) and match.group(2) in ("2", "3"):
        return (" squared" if match.group(2) == "2" else " cubed") + apart
    return f" to the power of {minus}{_words(int(match.group(2)), 'en')}{apart}"


# The 1990s, the '80s: a decade is its year's words made plural (nineteen nineties, eighties).
_DECADE = re.compile(r"(?:\b(1[1-9]\d0|20\d0)|'?\b([1-9]0))'?s\b")
# A year of its last two digits ("the summer of '69", "class of '05"): sixty nine, oh five, no mark.
# Followed by a space or a clause's mark alone: a quoted '12' keeps its quotes, '50% its percent.
_ELIDED_YEAR = re.compile(r"(?<![\w'])'(\d\d)(?=[\s,;!?)]|\.(?!\d)|$)")
_CLOCK = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)(?!\d)")  # 3:30, 15:05, 7:05pm
# a.m. and p.m. after a time (7 pm, 7:05PM, 9 a.m.): their letters apart; a full stop that ends the text stays.
_MERIDIEM = re.compile(r"(?<=\d)\s?([AaPp])\.?\s?[Mm](\.?)(?![^\W\d_])(?=(\s*$)?)")
# 1/2, 3/4, 5/8: a half, three quarters, five eighths; 1 1/2: one and a half.
_FRACTION = re.compile(r"(?:\b(\d+)\s+)?\b([1-9])/([2-9]|1[0-6])\b(?!/)")
_FRACTION_NAMES = {2: ("half", "halves"), 4: ("quarter", "quarters")}
_MINUS = re.compile(r"(?<![\w.,])[-\u2212](?=\d)")  # -5, −5 (U+2212): minus five, not a hyphen between words or numbers
# A dash between two numbers is a range or a score, both said with "to": 25-30 minutes, 3-2, £15-£20,
# 5%-10%.
# A dash with a space before and none after is a sign ("20 -5": twenty minus five, not twenty to five).
_NUMBER_RANGE = re.compile(r"(?<=[\d%])(?:\s[-\u2013]\s|[-\u2013]\s?)(?=[$£€¥₹-]?\d)")
_MINUS_WORDS = {
    "de": "minus",
    "es": "menos",
    "fr": "moins",
    "it": "meno",
    "nl": "min",
    "pl": "minus",
    "pt": "menos",
    "ru": "\u043c\u0438\u043d\u0443\u0441",  # минус
    "sv": "minus",
    "tr": "eksi",
}
# Three digits written against letters name a thing, said as a code is: "A380" a three eighty,
# "H264" h two sixty four, "sha256", "B204", "abc123" (a count stands apart: "100 m", "256GB").
_GLUED_CODE = re.compile(r"(?<=[^\W\d_])([1-9]\d\d)(?![\d.,]?\d)(?![^\W_])")
_LETTERS_AND_DIGITS = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")  # 5km, MP3: words apart
_AMPERSAND = re.compile(r"\s*&\s*")
_ORDINAL = re.compile(r"\b(\d{1,3}(?:,\d{3})+|\d+)(st|nd|rd|th)\b", re.IGNORECASE)  # 1,000,000th
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?%")
# A four-digit number after "in", "since", ... is a year ("in 1999": nineteen ninety nine), and so is
# the end of a range after it ("between 1914 and 1918", "from 1939-45"); "1999 dollars" is not.
_A_YEAR = r"(1[1-9]\d\d|20\d\d)(?!\d|,\d|\.\d)"
_YEAR = re.compile(
    rf"\b(in|since|from|by|until|till|to|of|during|before|after|between|year|circa|c\.)\s+{_A_YEAR}"
    r"(?:(\s*[-\u2013]\s*|\s+(?:and|or|to)\s+)(1[1-9]\d\d|20\d\d|\d\d)(?!\d|,\d|\.\d))?",
    re.IGNORECASE,
)
# A four-digit number from 1100 to 2099 that no count noun follows is a year, as Tacotron's cleaners
# read every one: "2024 was", "the 1990 world cup", "founded 1998", "1600 pennsylvania avenue"
# (sixteen hundred); "1999 dollars", "1500 people" are counts.
_COUNT_NOUN = (
    r"(?!(?:was|has|is|this|his|its|yes|thus|always|perhaps|whereas|as)\b)[^\W\d_]*[^\W\d_su]s"
    r"|people|men|women|children|feet|teeth|by"  # "1920x1080": 1920 by 1080, sizes
)
# "3.5m people", "10k users": a scale before a count noun (a "100m sprint" is left to the reader).
_SCALED_COUNT = re.compile(rf"(?<![\d.,$£€¥₹])(\d+(?:\.\d+)?)\s?(k|m|bn)\b(?=\s+(?:{_COUNT_NOUN})\b)", re.IGNORECASE)
# A height in feet and inches: 6'2" is six foot two.
_FEET_INCHES = re.compile(r"(?<![\w'])([1-9])'\s?(\d|1[01])(?:\"|'')?(?![\d'])")
_BARE_YEAR = re.compile(
    rf"(?<![\d.,$£€])(?<!by )(1[1-9]\d\d|20\d\d)(?![\d.,]?\d)(?!\s+(?:{_COUNT_NOUN})\b)", re.IGNORECASE
)
# A year and the last two digits of another after it (1939-45, read "to" by then) are years anywhere.
_YEAR_SPAN = re.compile(r"\b(1[1-9]\d\d|20\d\d) to (\d\d)\b(?![.,]\d)")
# A date in digits: 12/25/2020 is December twenty fifth, 25/12/2020 the twenty fifth of December;
# where both could be the month, American English puts it first and the rest of English second.
_NUMERIC_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4}|\d\d)\b")
# 1.5.2026 is written day first wherever dots part a date; 12-25-2020 in the reader's own order. Both
# had been read without their dots or as ranges ("one five two thousand and twenty six").
# Its year 1500-2099, not after a program's name or a word that versions or numbers ("Windows 6.1.7601", "Kernel
# 5.10.1024", "Figure 2.1.1900" name); a dash between two is "to".
_DATE_YEAR = r"(1[5-9]\d\d|20\d\d)"
_DOTTED_DATE = re.compile(rf"(?<![\w.,-])(\d{{1,2}})\.(\d{{1,2}})\.{_DATE_YEAR}(?![\w]|[.,]\d)")
_DASHED_DATE = re.compile(rf"(?<![\w.,-])(\d{{1,2}})-(\d{{1,2}})-{_DATE_YEAR}(?![\w-]|[.,]\d)")
_DATE_SPAN = re.compile(
    r"(?<![\w.,-])(\d{1,2}[.-]\d{1,2}[.-]\d{4}|\d{4})(?:\s*\u2013\s*|\s*-\s*)(?=\d{1,2}[.-]\d{1,2}[.-]\d{4}\b)"
)
_BETWEEN_BEFORE = re.compile(r"\bbetween\s+$", re.IGNORECASE)
# Three or more numbers joined by hyphens, one of them long or led by 0, name a thing (ISBN
# 978-3-16-148410-0, 06-12-34-56-78): each group said apart, a long or zero-led one digit by digit; not
# ranges ("978 to 3 to 16"). Short ones are a series (`_hyphen_code`).
_HYPHEN_CODE = re.compile(r"(?<![\w.,-])\d+(?:-\d+){2,}(?![\w-]|[.,]\d)")
# Three or more numbers with a word hyphened to their end: the numbers read as they are alone (a code, a
# series, a date), not as ranges ("three to two to one-go", "978 to 0 to 306 ... -ebook" had been said).
_SERIES_THEN_WORD = re.compile(r"(?<![\w.,-])(\d+(?:-\d+){2,})-([^\W\d_]+)\b(?!-)")


def _series_then_word(match: re.Match) -> str:
    """A count (3-2-1-go, 1-2-3-go) or a code's check letter (0-306-40615-X): the word after a pause;
    another is a compound's, said with its numbers (a 30-60-90-day plan)."""
    numbers = [int(group) for group in match.group(1).split("-")]
    steps = {a - b for a, b in zip(numbers, numbers[1:])}
    counted = steps in ({1}, {-1})
    return f"{match.group(1)}{', ' if counted or len(match.group(2)) == 1 else ' '}{match.group(2)}"


# A day and month with no year after a word that dates ("on 12/31", "by 3/4", "due 4/15", "Tuesday
# 3/5"); alone 12/31 may be a fraction or a score. See `_day_and_month` for the fractions after them.
_DATING_WORDS = "on|by|until|till|since|before|after"
_DAY_AND_MONTH = re.compile(
    rf"\b((?:{_DATING_WORDS}|due|ends|ending|expires?|effective|dated|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day,?))\s+(\d{1,2})/(\d{1,2})\b(?![/.,]?\d)",
    re.IGNORECASE,
)
# A weekday shortened before a day and month, told from "sat" and "wed" by its capital: Tue 3/5.
_WEEKDAY_BEFORE_DATE = re.compile(r"\b(Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\.?(?=,?\s+\d{1,2}/\d{1,2}\b)")
# A share, not a date: "by 1/10 each week", "dropped by 1/3".
_SHARE_AFTER = re.compile(r"\s*(?:each|every|per|percent|times)\b")
_PRICED_AFTER = re.compile(
    r"\s*(?:price|prices|priced|off|pound|pounder|lbs?|gallon|pint|dozen|days?|miles?|mi|marathon|inch|inches|in|"
    r"cups?|hours?|of|length|size|tank|time|ft|km|oz|tsp|tbsp|teaspoons?|tablespoons?)\b",
    re.IGNORECASE,
)
_CHANGED_BY = re.compile(
    r"\b(?:dropped|drops|fell|falls?|rose|rises?|grew|grows?|increased?|increases|decreased?|decreases|"
    r"reduced?|reduces|cut|cuts|raised?|raises|lowered?|lowers|multiplied|divided?|shrank|shrunk|shrinks?|"
    r"gained?|gains|lost|loses?)\s+by\s+$",  # not "sign up by 5/1", "pay off by 12/1": dates
    re.IGNORECASE,
)
# Hundreds, thousands and millions as a count: 1,000s of people, the 100s.
_ROUND_PLURAL = re.compile(r"(?<![\d.,])(100|1,?000|10,?000|100,?000|1,?000,?000)'?s\b")
_ROUND_PLURALS = {
    "100": "hundreds",
    "1000": "thousands",
    "10000": "tens of thousands",
    "100000": "hundreds of thousands",
    "1000000": "millions",
}
# A range of money with its sign once, before the first: $5-10 is five to ten dollars.
_MONEY_RANGE = re.compile(
    r"([$£€¥₹])\s?(\d[\d,]*)\s?[-\u2013]\s?(?=\d[\d,]*(?![\d,]*[.\d]\d)(?:\s?(?:k|m|bn|million|billion)\b)?)"
)
# $50k-$75k, each with its sign and scale: its dash is "to" (the two amounts had been read joined).
# $50k-75k too: the second amount takes the first's sign.
_SCALED_MONEY_RANGE = re.compile(
    r"([$£€¥₹])(\s?\d[\d,]*(?:\.\d+)?\s?(?:k|m|mn|bn|b|tn)\b)\s?[-\u2013]\s?[$£€¥₹]?"
    r"(?=\s?\d[\d,]*(?:\.\d+)?\s?(?:k|m|mn|bn|b|tn)\b)",
    re.IGNORECASE,
)
# 5 GB/day, 200 mg/day: a unit per a span of time or a person, read "per" (it had been "gb/day").
_UNIT_PER = re.compile(
    r"(?<=\d)(\s?[^\W\d_]{1,3})/(?=(?:day|night|week|month|year|hour|minute|person|user|head|mo|yr|wk|hr|min)\b)",
    re.IGNORECASE,
)
# An era: 753 BC (seven fifty three b c), A.D. 79; "ad" and "ce" are words, so only dotted (the
# capitals of 79 AD and 1 CE are dotted before the text is lowered: `text.before_lowering`).
_ERA_AFTER = re.compile(
    r"(?<![\d.,])(\d{1,4})\s?(b\.\s?c\.(?:\s?e\.)?|a\.\s?d\.|c\.\s?e\.|bce|bc)(?![^\W\d_])", re.IGNORECASE
)
_ERA_BEFORE = re.compile(r"(?<![^\W\d_])(a\.\s?d\.)\s?(\d{1,4})\b", re.IGNORECASE)
# Pence (50p), and amounts written with their currency's code after them (10 USD, 20 eur).
_PENCE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)p\b")
_CENTS = re.compile(r"(?<![\d.,])(\d+)\s?\u00a2")  # 99¢: ninety nine cents
# British English writes a time with a dot before its am or pm: 9.30am is nine thirty a m.
_DOTTED_CLOCK = re.compile(r"\b([01]?\d|2[0-3])\.([0-5]\d)(?=\s?[ap]\.?m\b)", re.IGNORECASE)
# A month shortened before its day or a year: "Dec 25", "Mar. 15" (december twenty fifth), "Sep 2023".
_MONTH_SHORT = re.compile(
    r"\b(jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?\s+(?=\d{1,2}(?:st|nd|rd|th)?\b|(?:1[6-9]|20)\d\d\b)",
    re.IGNORECASE,
)
_MONTH_OF = dict(zip("jan feb mar apr may jun jul aug sep oct nov dec".split(), _MONTHS.split("|")))
# A ratio or score with a colon and one digit after it (3:1, 1:5): "to"; 140/90 is "over", 24/7 and
# 50/50 as they are said.
_RATIO = re.compile(r"(?<![\d:.,])(\d{1,2}):(\d)(?![\d:])")
_SAYINGS = {"24/7": "twenty four seven", "50/50": "fifty fifty", "9/11": "nine eleven"}
# A decimal written without its leading zero (.5, $.50): not after a letter or a point (v.2, ...5).
_BARE_DECIMAL = re.compile(r"(?<![\w.])\.(\d)")
_LETTERS_BEFORE_MONEY = re.compile(r"(?<=[^\W\d_])(?=[$£€¥₹]\d)")
_EMERGENCY = re.compile(r"(?<![\d.,/])911(?![\d.,/]?\d)")  # nine one one
# Numbers that name, not count, said as they are: "dial 999" (nine nine nine), "error 404" (four oh
# four), "ZIP code 90210" (its digits), "Xbox 360" (three sixty), "401(k)" (four oh one k), "Form 1099"
# (ten ninety nine).
_DIALED = re.compile(
    r"\b((?:call|dial|ring|text)\s+)(999|112|111|988|311|411|211|511|000|101)\b(?![\d.,]?\d)"
    r"(?!\s+(?:[a-z]+s|people|staff)\b)",  # "call 101 customers": a count
    re.IGNORECASE,
)
_HTTP_CODES = r"10[0-3]|20\d|21\d|22[0-6]|30[0-8]|4[0-4]\d|45[01]|50\d|51[01]"  # RFC 9110's and the registry's
_STATUS_CODE = re.compile(
    rf"\b(?:(?<=error )|(?<=status )|(?<=http )|(?<=code ))({_HTTP_CODES})\b(?![\d.,]?\d)(?!\s+times\b)"
    rf"|\b({_HTTP_CODES})(?=\s+(?:error|response|redirect)\b(?!\s+[a-z]+s\b))",  # "150 errors", "a 250 page book", "150 status updates" count
    re.IGNORECASE,
)
_ZIP_CODE = re.compile(r"\b((?:zip|postal)(?:\s+code)?:?\s+)(\d{5})(?:-(\d{4}))?\b", re.IGNORECASE)
_NAMED_THREES = re.compile(
    r"\b(xbox(?=\s+360)|(?:office|microsoft)(?=\s+365))(\s+)(36[05])\b(?![\d.,]?\d)(?!\s+days\b)", re.IGNORECASE
)
_RETIREMENT_PLAN = re.compile(r"\b(401|403|457)\s?\(([kb])\)", re.IGNORECASE)
_TAX_FORMS = r"1040|1099|1098|1095|1065|1120|941|940|990|4868|8821|8822|8829|8949|2848|5498|3922|3921"
_TAX_FORM = re.compile(
    rf"(?<=\bform )({_TAX_FORMS})\b(?![\d.,]?\d)|\b({_TAX_FORMS})(?=(?:-[A-Z]{{1,4}})?\s+form\b)", re.IGNORECASE
)
# A sign stuck to a percent or an amount (-3.5%, +5%, -$250), read before the number is words.
_SIGNED = re.compile(r"(?<![\w.,+-])([-\u2212+])(?=[$£€¥₹]\d|\d[\d.,]*\s?%)")
# "the 2024 Olympics", "the 2008 elections": a year before a plural noun after "the".
_THE_YEAR = re.compile(
    r"(?<=\bthe )(19\d\d|20\d\d)(?=\s+(?!(?:people|men|women|children)\b)[^\W\d_]+s\b)", re.IGNORECASE
)
# A height or a length in feet and inches (5 ft 4 in), and inches with a full stop (6 in. of snow).
_FEET_AND_INCHES = re.compile(r"\b(\d{1,2})\s?ft\.?\s+(\d{1,2})\s?(?:in\b\.?|inch(?:es)?\b)", re.IGNORECASE)
_INCHES = re.compile(r"\b(\d+(?:\.\d+)?)\s?in\.(?=\s+[a-z])")
# Days and months after their numbers: June 3-5 (june third to fifth), 1 Jan 2024.
_DAY_RANGE = re.compile(
    rf"\b({_MONTHS})\s+(\d{{1,2}})(?:st|nd|rd|th)?\s?[-\u2013]\s?(\d{{1,2}})(?:st|nd|rd|th)?\b(?![-/:.]\d)",
    re.IGNORECASE,
)
_DAY_MONTH_SHORT = re.compile(
    r"\b(\d{1,2})\s+(jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b\.?(?=\s|,|$)", re.IGNORECASE
)
_WEEKDAYS = {
    "mon": "monday",
    "tue": "tuesday",
    "tues": "tuesday",
    "wed": "wednesday",
    "thu": "thursday",
    "thur": "thursday",
    "thurs": "thursday",
    "fri": "friday",
    "sat": "saturday",
    "sun": "sunday",
}
_WEEKDAY_RANGE = re.compile(rf"\b({'|'.join(_WEEKDAYS)})\.?\s?[-\u2013]\s?({'|'.join(_WEEKDAYS)})\b\.?", re.IGNORECASE)
# Numbers with two or more points: a version (2.3.1: two point three point one), or an IPv4 address
# (192.168.1.1: one nine two dot one six eight dot one dot one).
# A version of two parts after "version" or a program's name: Python 3.11 is "three point eleven",
# Ubuntu 22.04 "twenty two point oh four" (they had been read as decimals, "three point one one").
_SOFTWARE = (
    "python|node\\.js|node|nodejs|java|ruby|php|perl|golang|rust|swift|kotlin|scala|typescript|ios|ipados|macos|"
    "android|ubuntu|debian|fedora|centos|rhel|linux|kernel|cuda|cudnn|tensorflow|pytorch|torch|keras|"
    "numpy|django|rails|react|angular|vue|kubernetes|docker|postgres|postgresql|mysql|redis|gcc|clang|llvm|"
    "firefox|chrome|safari|xcode|blender|bash|git|npm|pip|openssl|tls|http"
)
# After a program's name, where a version's words follow, not a price's, a measure's or a time's ("Rust
# 2.50 per pound", "bash 7.30 pm"); after "version" and "v", always.
_AS_VERSION = (
    r"(?=\s*(?:[,;:!?)]|\.(?!\d)|$)|\s+(?:is|was|are|were|will|works?|supported|and|or|to|on|in|with|introduced|released?|releases|adds?|added|"
    r"supports?|required|requires|installed|beta|lts|update|later|above|newer|that|which|has|have|brings|drops|ships?)\b)"
)
_VERSION = re.compile(
    rf"\b(?:(version|ver|v)\.?(\s?)|({_SOFTWARE})(\s))(\d+)\.(\d{{2,}})(?![\w-]|\.?\d)"
    rf"((?:(?:,?\s+(?:or|and|to|through)|,)\s+\d+\.\d{{2,}}(?![\w-]|\.?\d))*)",  # "3.10 or 3.12": both versions
    re.IGNORECASE,
)
_VERSIONED = re.compile(
    rf"(?:\b(?:version|ver\.?|v|release|build|firmware|kernel|patch|rev\.?|revision|section|chapter|table|rule|update|"
    r"step|exercise|figure|fig\.|equation|eq\.|docket|lot|route|item|part|paragraph|para\.|clause|article|art\.|"
    rf"no\.|number|windows|{_SOFTWARE})|[#§])\s*:?\s*$",
    re.IGNORECASE,
)
_DOTTED_NUMBERS = re.compile(r"(?:(?<![\w.])|(?<=\bv))\d+(?:\.\d+){2,}(?![\w]|\.\d)")  # v2.0.1 too
# Before a number, as it is said: ~20 is about twenty, >50 more than fifty, <= 5 at most five; in
# the languages whose number after these words keeps its plain form (Russian and Polish decline it).
_COMPARISON_SIGNS = tuple(
    re.compile(rf"(?<![\w<>=~-])(?:{signs})\s?(?=[$£€¥₹]?\d)") for signs in ("~", ">=|\u2265", "<=|\u2264", ">", "<")
)
_COMPARISON_WORDS = {
    "en": ("about", "at least", "at most", "more than", "less than"),
    "de": ("etwa", "mindestens", "höchstens", "mehr als", "weniger als"),
    "fr": ("environ", "au moins", "au plus", "plus de", "moins de"),
    "es": ("aproximadamente", "al menos", "como máximo", "más de", "menos de"),
    "it": ("circa", "almeno", "al massimo", "più di", "meno di"),
    "nl": ("ongeveer", "minstens", "hoogstens", "meer dan", "minder dan"),
    "pt": ("cerca de", "pelo menos", "no máximo", "mais de", "menos de"),
    "sv": ("cirka", "minst", "högst", "mer än", "mindre än"),
}


def _comparisons(text: str, language: str) -> str:
    for sign, word in zip(_COMPARISON_SIGNS, _COMPARISON_WORDS[language]):
        text = sign.sub(f"{word} ", text)
    return text


# $25/person, 3/day: a rate, "per"; after digits only, so 24/7, 1/2 and and/or are not, nor a path's
# /api/v1/users, whose digits follow a letter ("v one per users").
_PER = re.compile(r"(?<![\w/])(\d[\d.,]*)\s?/\s?(?=[^\W\d_]{2,}\b)")
_OVER = re.compile(r"(?<![\d/])(?<![.,]\d)(\d{1,3})/(\d{1,3})(?![\d/]|[.,]\d)")
# A score out of ten (9/10, 10/10), unless it is a part of something: 9/10 of the votes.
_OUT_OF_TEN = re.compile(r"(?<![\d/.,])(10|[0-9])/10(?![\d/]|[.,]\d)(?!\s+of\b)")
# "a 1/2 cup": the fraction says its own article (half a cup, a quarter mile), not "a a half".
_ARTICLE_AFTER = re.compile(r"\s+an?\s", re.IGNORECASE)
_ARTICLE_FRACTION = re.compile(r"\b(?:a|an)\s+(?=1/(?:[2-9]|1[0-6])\b(?!/))", re.IGNORECASE)
# 17.30 after a word of time is a clock (British writing), as 9.30 pm is; not 17.30 m or 17.30 each.
_HOUR = r"(1\d|2[0-3]|[1-9])\.([0-5]\d)"  # not 0.25, a decimal
_DOTTED_CLOCK_AFTER = re.compile(
    rf"\b(at|until|till|by|before|after)\s+{_HOUR}"
    r"(?=\s*(?:[,;!?)]|\.(?!\d)|$)|\s+(?:today|tomorrow|tonight|sharp|on|every|hours|hrs)\b)",
    re.IGNORECASE,
)
_DOTTED_CLOCK_SPAN = re.compile(
    rf"\b(between|from)\s+{_HOUR}\s+(and|to|until|till)\s+{_HOUR}(?![\d.]\d)", re.IGNORECASE
)
# Aircraft are named by their digits in pairs: a Boeing 747 (seven forty seven), an Airbus A380.
_AIRCRAFT = re.compile(r"\b(boeing\s+7)(\d\d)(?=\b)|\b(airbus\s+a)(3)(\d\d)\b", re.IGNORECASE)
# A video's lines (1080p, 720p, 1080i), said in pairs as a model's name is: ten eighty p, not pence.
_VIDEO_LINES = re.compile(r"(?<![\d.,])(480|576|720|1080|1440|2160)([pi])\b", re.IGNORECASE)
# A rating out of 5, 10 or 100 (rated 4.5/5, 4/5 stars): "four out of five", not a fraction.
_RATING = re.compile(
    r"(?:(?<=\brated )|(?<=\bscored )|(?<=\brating )|(?<=\bscore ))(\d{1,3}(?:\.\d)?)/(5|10|100)\b(?![/.,]\d)"
    r"|(?<![\d/.,])(\d{1,3}(?:\.\d)?)/(5|10|100)(?=\s+stars?\b)",
    re.IGNORECASE,
)
# Foot and inch marks after a number before a word: a 12" pizza, 6' tall; a quote's closing mark is not one.
_MARKED_MEASURE = re.compile(r"(?<![\w'\".])(\d+(?:\.\d+)?)(['\"\u2032\u2033])(?=\s+[^\W\d_])")
_MEASURE_PLURAL_BEFORE = re.compile(
    r"\s+(?:tall|long|wide|high|deep|thick|away|apart|of|in|across|below|above|under|over|off|down|up)\b",
    re.IGNORECASE,
)
_OPENING_QUOTES = {'"': re.compile(r"(?<![^\s(\[])\"(?=\S)"), "'": re.compile(r"(?<![^\s(\[])'(?=[^\W\d_])")}
_MERIDIEM_RANGE = re.compile(r"(\d\s?[ap]\.?m\.?)\s?[-\u2013]\s?(?=\d)", re.IGNORECASE)  # 9am-5pm
_CODED_MONEY = re.compile(r"\b(\d[\d,]*(?:\.\d+)?)\s?(usd|eur|gbp)\b", re.IGNORECASE)
_CODES = {"usd": "$", "eur": "\u20ac", "gbp": "\u00a3"}
_LEADING_ZERO = re.compile(r"(?<![\d.,:])0\d+(?![\d.,:]?\d)")  # 007: oh oh seven, as a code is read


# num2words' regional readers for an espeak-ng voice: Brazilian Portuguese says dezenove and um bilhão
# (the short scale) where Portugal says dezanove and mil milhões; Belgian and Swiss French say
# septante and nonante. Set for the length of one reading (`regional`), so every number word in it agrees.
_REGIONAL = {"pt-br": "pt_BR", "fr-be": "fr_BE", "fr-ch": "fr_CH"}
_REGION: ContextVar[Optional[str]] = ContextVar("xtts_number_region", default=None)


def regional(language: Optional[str], read: Callable[[str], str]) -> Callable[[str], str]:
    """`read`, reading its numbers in the words of `language`'s region where num2words has them."""
    region = _REGIONAL.get((language or "").lower())
    if region is None:
        return read

    def in_region(text: str) -> str:
        token = _REGION.set(region)
        try:
            return read(text)
        finally:
            _REGION.reset(token)

    return in_region


def _words(number: float | int, language: str, **options) -> str:
    from num2words import num2words

    if language == "tr" and isinstance(number, int) and options.get("to", "cardinal") in ("cardinal", "ordinal"):
        return _turkish_words(number, ordinal=options.get("to") == "ordinal")
    # Hyphens and commas are num2words' spelling, not pauses: "ninety-nine" is two words read on. Lower
    # case, as the cleaners left the text around it: German's "Komma" and "Million" were letters the
    # vocabulary lacked.
    region = _REGION.get()
    try:
        said = num2words(number, lang=region if region and region[:2] == language else language, **options)
    except (OverflowError, NotImplementedError, KeyError, IndexError, ValueError, RecursionError):
        # (RecursionError: num2words' Hungarian, given a decimal of 10**20 or more)
        # Past a language's largest named number (10**27 in Spanish, less in Russian and Italian): digit by digit
        digits = str(number) if isinstance(number, int) else f"{number:.0f}"
        return " ".join(_words(int(digit), language) for digit in digits if digit.isdigit())
    said = said.replace("-", " ").replace(",", "").lower()
    if language == "sv":  # num2words' "etttusen": Swedish drops the third t (ettusen)
        said = said.replace("ttt", "tt")
    elif language == "es":  # num2words' "veintiuno mil": one before mil and millones is veintiún, un
        said = re.sub(
            r"\b(veinti)?uno(?= (?:mil|millones|billones)\b)", lambda m: "veintiún" if m.group(1) else "un", said
        )
    elif language == "it":  # ventitré, centotré: a compound ending in tre takes the accent
        said = re.sub(r"(?<=[^\W\d_])tre\b", "tré", said)
    return said


def number_words(number: int, language: str, to: str = "cardinal") -> str:
    """A whole number in words as the characters front end reads it: lower case, words apart."""
    return _words(number, language, to=to)


def slavic_ordinal(number: int, language: str, form: str) -> str:
    """A Russian or Polish ordinal in `form`: "nom" (masculine nominative: первый, pierwszy), "gen"
    (первого, pierwszego), "loc" (Russian prepositional первом, Polish locative pierwszym) or "fem"
    (the feminine nominative: первая, pierwsza)."""
    if language == "ru":
        return _russian_ordinal(
            number, {"nom": "\u0439", "gen": "\u0433\u043e", "loc": "\u043c", "fem": "\u044f"}[form]
        )
    if form in ("gen", "loc"):
        return _polish_ordinal(number, form == "loc")
    said = _words(number, "pl", to="ordinal")
    # Each adjective of a Polish ordinal declines: dwudziesta pierwsza, trzecia.
    feminine = ((r"([gk])i$", r"\1a"), (r"i$", "ia"), (r"y$", "a"))  # druga, trzecia, pierwsza

    def declined(word: str) -> str:
        for ending, replacement in feminine:
            if re.search(ending, word):
                return re.sub(ending, replacement, word)
        return word

    return said if form == "nom" else " ".join(declined(word) for word in said.split())


# Turkish writes its numbers as words apart (bin dokuz yüz yirmi üç), where num2words runs them
# together, and an ordinal with its suffix in vowel harmony on the last word (yirmi üçüncü).
_TR_ONES = ["", "bir", "iki", "üç", "dört", "beş", "altı", "yedi", "sekiz", "dokuz"]
_TR_TENS = ["", "on", "yirmi", "otuz", "kırk", "elli", "altmış", "yetmiş", "seksen", "doksan"]
_TR_SCALES = ["", "bin", "milyon", "milyar", "trilyon"]
_TR_SUFFIX = {"a": "ıncı", "ı": "ıncı", "e": "inci", "i": "inci", "o": "uncu", "u": "uncu", "ö": "üncü", "ü": "üncü"}


def _turkish_words(number: int, ordinal: bool = False) -> str:
    if number < 0:
        return "eksi " + _turkish_words(-number, ordinal)
    words: list[str] = []
    for scale in range(len(_TR_SCALES) - 1, -1, -1):
        group = number // 1000**scale % 1000
        if not group:
            continue
        hundreds, rest = divmod(group, 100)
        part = ([] if hundreds < 2 else [_TR_ONES[hundreds]]) + (["yüz"] if hundreds else [])
        part += [w for w in (_TR_TENS[rest // 10], _TR_ONES[rest % 10]) if w]
        words += ([] if scale == 1 and group == 1 else part) + ([_TR_SCALES[scale]] if scale else [])
    said = " ".join(words) or "sıfır"
    if not ordinal:
        return said
    if said.endswith("dört"):
        said = said[:-1] + "d"  # dördüncü
    vowel = next(c for c in reversed(said) if c in _TR_SUFFIX)
    suffix = _TR_SUFFIX[vowel]
    return said + (suffix[1:] if said[-1] in _TR_SUFFIX else suffix)


# Where num2words reads a decimal wrongly, its parts are read apart: its Turkish read 0,07 as 0,7
# and 1250,5 as 1250,50, with the words run together. Spain says "coma" for its decimal comma
# (num2words says Latin America's "punto"), in _plain_comma.
_DECIMAL_WORDS = {"tr": ("virg\u00fcl", "s\u0131f\u0131r")}
# A decimal's digits after the comma read as one number, as these languages say a price or a time
# (nueve coma cincuenta y ocho; neuf virgule cinquante-huit for 9,58): Spanish at any length; French,
# Italian and Portuguese up to two digits, and digit by digit past them (pi: trois virgule un quatre...).
_COMMA_WORDS = {
    "es": ("coma", "cero"),
    "fr": ("virgule", "z\u00e9ro"),
    "it": ("virgola", "zero"),
    "pt": ("v\u00edrgula", "zero"),
}
_COMMA_GROUPED_UP_TO = {"fr": 2, "it": 2, "pt": 2}


def _decimal_parts(value: str, language: str, point: str, zero: str) -> str:
    whole, _, fraction = value.partition(".")
    zeros = [zero] * (len(fraction) - len(fraction.lstrip("0")))
    rest = [_words(int(fraction), language)] if fraction.strip("0") else []
    return " ".join([_words(int(whole), language), point, *zeros, *rest])


def _number(value: str, language: str) -> str:
    """`value` ("1999" or "1250.5": digits, at most one decimal point) in words."""
    whole, _, fraction = value.partition(".")
    if not fraction:
        return _words(int(whole), language)
    if language == "en":
        return _english_number(value)
    if language not in _DECIMAL_WORDS:
        if len(whole) > 15:  # past a float's exact digits: num2words would read another number
            return " ".join(_words(int(digit), language) for digit in value if digit.isdigit())
        point = _words(1.5, language).split()  # "eins komma fünf": the word its decimal point is read as
        if not fraction.strip("0") and len(point) == 3:  # 1,000 had been "eins", its digits dropped
            return " ".join([_words(int(whole), language), point[1], *[_words(0, language)] * len(fraction)])
        return _words(float(value), language)
    return _decimal_parts(value, language, *_DECIMAL_WORDS[language])


def _plain(match: re.Match, language: str) -> str:
    text = match.group(0)
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text):  # 1,999,000 or 1,999.50: thousands separators
        value = text.replace(",", "")
        return _number(value, language)
    if re.fullmatch(r"\d+\.\d+", text):
        return _number(text, language)
    if re.fullmatch(r"\d+", text):
        return _words(int(text), language)
    # 1,2,3: a list, its commas said as pauses ("one two three" had run them together)
    return ", ".join(
        " ".join(_words(int(part), language) for part in group.split(".") if part) for group in text.split(",")
    )


# Languages that write 1.999,50 (or 1 999,50) where English writes 1,999.50: a decimal comma, thousands
# grouped by "." or a space (CLDR's number symbols, https://cldr.unicode.org/translation/number-currency-formats);
# the rest of num2words' languages write numbers as English does. Latin American Spanish and Swiss German
# write a decimal point.
_DECIMAL_COMMA = frozenset(
    "az be ca cs da de es fi fr hu id is it kz lt lv nl no pl pt ro ru sk sl sr sv tg tr uk vi".split()
)
_DECIMAL_POINT_REGIONS = frozenset({"es-419", "es-mx", "de-ch"})
# The word for "%" where it follows its number and does not decline (Russian and Turkish do not qualify).
_PERCENT_WORDS = {
    "de": "prozent",
    "es": "por ciento",
    "fr": "pour cent",
    "it": "per cento",
    "nl": "procent",
    "pl": "procent",
    "pt": "por cento",
    "sv": "procent",
    "no": "prosent",
    "da": "procent",
}
_PERCENT_SIGN = re.compile(r"(\d)\s?%")
# Russian's word for "%" takes the number's case: 1 процент, 2-4 процента, 5-20 процентов, a fraction процента.
_RUSSIAN_PERCENT = re.compile(r"(\d+(?:[.,]\d+)?)\s?%")
_TURKISH_PERCENT = re.compile(r"%\s?(\d)")


def _russian_percent(number: str) -> str:
    return _slavic_form(number, _RUSSIAN_PERCENT_FORMS)


# Forms of a noun after a number in Russian and Polish: (1, 21, 31...; 2-4, 22-24...; 5-20, 25...; a fraction).
_RUSSIAN_PERCENT_FORMS = (
    "\u043f\u0440\u043e\u0446\u0435\u043d\u0442",  # процент
    "\u043f\u0440\u043e\u0446\u0435\u043d\u0442\u0430",  # процента
    "\u043f\u0440\u043e\u0446\u0435\u043d\u0442\u043e\u0432",  # процентов
    "\u043f\u0440\u043e\u0446\u0435\u043d\u0442\u0430",
)


def _slavic_form(number: str, forms: Sequence[str], language: str = "ru") -> str:
    one, few, many, fraction = forms
    if not number.isdigit():
        return fraction
    last, last_two = int(number) % 10, int(number) % 100
    # Russian: 1, 21, 31 take the singular (двадцать один градус); Polish: 1 alone (dwadzieścia jeden stopni)
    if (int(number) == 1) if language == "pl" else (last == 1 and last_two != 11):
        return one
    if 2 <= last <= 4 and not 12 <= last_two <= 14:
        return few
    return many


# A temperature or an angle: "30 °C" is thirty degrees celsius, "-5 °C" minus fünf grad celsius. Per
# language: (one, many) and the words for C and F; Russian and Polish decline the noun with the number.
# C or F in either case: the cleaners have lowered the text before it is read ("30 °c").
_DEGREE = re.compile(r"(\d+(?:[.,]\d+)?)\s?\u00b0(?:\s?([CcFf])(?![^\W\d_]))?")
_DEGREE_WORDS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "en": (("degree", "degrees"), "celsius", "fahrenheit"),
    "de": (("grad", "grad"), "celsius", "fahrenheit"),
    "fr": (("degr\u00e9", "degr\u00e9s"), "celsius", "fahrenheit"),
    "es": (("grado", "grados"), "celsius", "fahrenheit"),
    "it": (("grado", "gradi"), "celsius", "fahrenheit"),
    "nl": (("graad", "graden"), "celsius", "fahrenheit"),
    "pt": (("grau", "graus"), "celsius", "fahrenheit"),
    "sv": (("grad", "grader"), "celsius", "fahrenheit"),
    "tr": (("derece", "derece"), "santigrat", "fahrenhayt"),
    "ru": (
        (
            "\u0433\u0440\u0430\u0434\u0443\u0441",
            "\u0433\u0440\u0430\u0434\u0443\u0441\u0430",
            "\u0433\u0440\u0430\u0434\u0443\u0441\u043e\u0432",
            "\u0433\u0440\u0430\u0434\u0443\u0441\u0430",
        ),
        "\u043f\u043e \u0446\u0435\u043b\u044c\u0441\u0438\u044e",  # по цельсию
        "\u043f\u043e \u0444\u0430\u0440\u0435\u043d\u0433\u0435\u0439\u0442\u0443",  # по фаренгейту
    ),
    "pl": (("stopie\u0144", "stopnie", "stopni", "stopnia"), "celsjusza", "fahrenheita"),
}


# Italian, Spanish and Portuguese often type the ordinal's º as a degree sign: "1° maggio", "2° piano".
_DEGREE_AS_ORDINAL = {
    language: re.compile(rf"\b(\d{{1,2}})\s?\u00b0(?=\s+(?:(?:de\s+)?(?:{months})|{nouns})\b)", re.IGNORECASE)
    for language, months, nouns in (
        (
            "it",
            "gennaio|febbraio|marzo|aprile|maggio|giugno|luglio|agosto|settembre|ottobre|novembre|dicembre",
            "piano|posto|secolo|premio|classificato|livello|anno|trimestre|semestre|capitolo|articolo|tentativo|"
            "episodio",
        ),
        (
            "es",
            "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre",
            "piso|lugar|siglo|premio|puesto|nivel|año|trimestre|semestre|capítulo|artículo|intento|episodio",
        ),
        (
            "pt",
            "janeiro|fevereiro|março|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro",
            "andar|lugar|século|prémio|prêmio|nível|ano",
        ),
    )
}


def _degrees(match: re.Match, language: str) -> str:
    number, unit = match.group(1), match.group(2)
    forms, celsius, fahrenheit = _DEGREE_WORDS[language]
    noun = _slavic_form(number, forms, language) if len(forms) == 4 else forms[number != "1"]
    said = _ONE_BEFORE_A_NOUN.get(language, number) if number == "1" else number
    return f"{said} {noun}" + {"C": f" {celsius}", "F": f" {fahrenheit}", None: ""}[unit and unit.upper()]


# "One" before a noun where num2words' counting word differs: ein Grad, not eins Grad.
_ONE_BEFORE_A_NOUN = {"de": "ein", "es": "un", "it": "un", "nl": "een", "sv": "en"}


# Metric units after a number, as each language says them: "5 km" is fünf kilometer, cinq kilomètres,
# пять километров, "1 kg" ein kilogramm. Per language, in the order of the abbreviations: one form
# (German and Dutch), one and many (and Swedish's neuter "one"), or the four Russian and Polish decline
# with the number; "" is a unit left out (Turkish says km/h before the number: saatte altmış kilometre).
_METRIC = ("km/h", "km", "m", "cm", "mm", "kg", "g", "mg", "l", "ml", "dl", "cl")
_METRIC_RU = ("км/ч", "км", "м", "см", "мм", "кг", "", "мг", "л", "мл", "дл", "")  # Russian writes its own
_METRIC_WORDS = {
    "de": "kilometer pro stunde;kilometer;meter;zentimeter;millimeter;kilogramm;gramm;milligramm;liter;milliliter;deziliter;zentiliter",
    "nl": "kilometer per uur;kilometer;meter;centimeter;millimeter;kilogram;gram;milligram;liter;milliliter;deciliter;centiliter",
    "fr": "kilomètre par heure/kilomètres par heure;kilomètre/kilomètres;mètre/mètres;centimètre/centimètres;"
    "millimètre/millimètres;kilogramme/kilogrammes;gramme/grammes;milligramme/milligrammes;litre/litres;"
    "millilitre/millilitres;décilitre/décilitres;centilitre/centilitres",
    "es": "kilómetro por hora/kilómetros por hora;kilómetro/kilómetros;metro/metros;centímetro/centímetros;"
    "milímetro/milímetros;kilogramo/kilogramos;gramo/gramos;miligramo/miligramos;litro/litros;mililitro/mililitros;"
    "decilitro/decilitros;centilitro/centilitros",
    "it": "chilometro orario/chilometri orari;chilometro/chilometri;metro/metri;centimetro/centimetri;"
    "millimetro/millimetri;chilogrammo/chilogrammi;grammo/grammi;milligrammo/milligrammi;litro/litri;"
    "millilitro/millilitri;decilitro/decilitri;centilitro/centilitri",
    "pt": "quilómetro por hora/quilómetros por hora;quilómetro/quilómetros;metro/metros;centímetro/centímetros;"
    "milímetro/milímetros;quilograma/quilogramas;grama/gramas;miligrama/miligramas;litro/litros;mililitro/mililitros;"
    "decilitro/decilitros;centilitro/centilitros",
    "tr": ";kilometre;metre;santimetre;milimetre;kilogram;gram;miligram;litre;mililitre;desilitre;santilitre",
    "pl": "kilometr na godzinę/kilometry na godzinę/kilometrów na godzinę/kilometra na godzinę;"
    "kilometr/kilometry/kilometrów/kilometra;metr/metry/metrów/metra;centymetr/centymetry/centymetrów/centymetra;"
    "milimetr/milimetry/milimetrów/milimetra;kilogram/kilogramy/kilogramów/kilograma;gram/gramy/gramów/grama;"
    "miligram/miligramy/miligramów/miligrama;litr/litry/litrów/litra;mililitr/mililitry/mililitrów/mililitra;"
    "decylitr/decylitry/decylitrów/decylitra;centylitr/centylitry/centylitrów/centylitra",
    "ru": "километр в час/километра в час/километров в час/километра в час;километр/километра/километров/километра;"
    "метр/метра/метров/метра;сантиметр/сантиметра/сантиметров/сантиметра;миллиметр/миллиметра/миллиметров/миллиметра;"
    "килограмм/килограмма/килограммов/килограмма;;миллиграмм/миллиграмма/миллиграммов/миллиграмма;"
    "литр/литра/литров/литра;миллилитр/миллилитра/миллилитров/миллилитра;децилитр/децилитра/децилитров/децилитра;",
    # Swedish: a third form, the "one" of a neuter noun (ett kilo, ett gram)
    "sv": "kilometer i timmen;kilometer;meter;centimeter;millimeter;kilo/kilo/ett;gram/gram/ett;milligram/milligram/ett;"
    "liter;milliliter;deciliter;centiliter",
}


def _metric_pattern(language: str, number: re.Pattern) -> Optional[tuple[re.Pattern, dict[str, tuple[str, ...]]]]:
    if language not in _METRIC_WORDS:
        return None
    names = _METRIC_RU if language == "ru" else _METRIC
    # "" is a unit left out: Russian's г is also год (2020 г.)
    units = {a: tuple(w.split("/")) for a, w in zip(names, _METRIC_WORDS[language].split(";")) if a and w}
    alternatives = "|".join(re.escape(a) for a in sorted(units, key=len, reverse=True))
    return re.compile(rf"(?<![\w.,])({number.pattern})\s?({alternatives})(?![^\W_]|/)", re.IGNORECASE), units


def _metric(match: re.Match, language: str, units: dict[str, tuple[str, ...]]) -> str:
    number, forms = match.group(1), units[match.group(2).lower()]
    # These languages group thousands by "." or a space and write a decimal comma: 1.500, 1 500, 1,5.
    digits = re.sub(r"[.\s]", "", number)
    if len(forms) == 4:
        noun = _slavic_form(digits, forms, language)
    else:  # French keeps the singular below two: 1,5 kilomètre
        one = number == "1" or (language == "fr" and float(digits.replace(",", ".")) < 2)
        noun = forms[0 if one or len(forms) == 1 else 1]
    article = forms[2] if len(forms) == 3 else _ONE_BEFORE_A_NOUN.get(language, number)
    return f"{article if number == '1' else number} {noun}"


# A telephone number, read digit by digit in its groups: "555-1234", "(020) 7946 0958", "+44 20 7946 0958";
# "500-1000", both ends round, is a range.
_PHONE = re.compile(
    r"(?<![\w.,-])(?:\+\d{1,3}(?:[\s.-]?\(?\d{1,5}\)?){2,5}"
    r"|\(\d{2,5}\)\s?\d{3,4}[\s.-]?\d{3,4}"
    r"|0\d{2,4}[\s-]\d{3,4}[\s-]?\d{3,4}"
    r"|(?:1-)?\d{3}-\d{3}-\d{4}|\d{3}\.\d{3}\.\d{4}|(?!\d\d0-\d{3}0\b)\d{3}-\d{4}"
    # 555 123 4567: a North American number in spaces (its area code starts 2-9); it had been one count.
    r"|(?:1 )?[2-9]\d\d \d{3} \d{4})(?![\w.,]?\d)"
)
_DIGIT_NAMES = "oh one two three four five six seven eight nine".split()

# What only capitals tell, read before English text is lowered (`english_capitals`). A currency's code
# beside an amount: USD 1500, 20 EUR (they had been "usd fifteen hundred"); those with a sign take it.
_CODE_SIGNS = {"USD": "$", "US$": "$", "EUR": "\u20ac", "GBP": "\u00a3", "JPY": "\u00a5", "INR": "\u20b9"}
_CODE_NAMES = {
    "CAD": ("Canadian dollar", "Canadian dollars"),
    "AUD": ("Australian dollar", "Australian dollars"),
    "NZD": ("New Zealand dollar", "New Zealand dollars"),
    "CHF": ("Swiss franc", "Swiss francs"),
    "CNY": ("yuan", "yuan"),
    "MXN": ("Mexican peso", "Mexican pesos"),
    "SEK": ("Swedish krona", "Swedish kronor"),
    "NOK": ("Norwegian krone", "Norwegian kroner"),
    "DKK": ("Danish krone", "Danish kroner"),
    "KRW": ("won", "won"),
    "BRL": ("Brazilian real", "Brazilian reais"),
    "AED": ("dirham", "dirhams"),
    "SGD": ("Singapore dollar", "Singapore dollars"),
    "HKD": ("Hong Kong dollar", "Hong Kong dollars"),
    "ZAR": ("rand", "rand"),
    "PLN": ("zloty", "zlotys"),
    "THB": ("baht", "baht"),
}
# Capitals before a number that is no model's: other currencies' codes, stock indexes (FTSE 7650).
_NO_MODEL = {*_CODE_SIGNS, *_CODE_NAMES, *"PHP TRY IDR MYR ILS EGP NGN KES PKR VND CZK HUF RUB UAH SAR QAR KWD".split()}
_NO_MODEL.update("ARS CLP COP PEN TWD FTSE NYSE DAX DOW NASDAQ NIKKEI SENSEX ASX TSX IBEX CAC HSI SPX".split())
_CODE_PATTERN = "|".join(re.escape(code) for code in [*_CODE_SIGNS, *_CODE_NAMES])
_AMOUNT = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?(?![\d.,]?\d|[^\W\d_])"
_SCALE_WORDS = r"(\s+(?:thousand|million|billion|trillion)\b)?"
# What may follow an amount with a code that is also a word's letters: "3 CAD files", "CNY 2024
# celebrations", "CAD 3D models" and CAD 2024 (a program's year) are no money.
_AFTER_MONEY = r"(?=\s*(?:[.,;:!?)]|$)|\s+(?:and|or|per|each|a|an|for|to|in|at|on|is|was|plus|with|only|now|total)\b)"
_CODE_MONEY = re.compile(
    rf"\b(?:({_CODE_PATTERN})\s?({_AMOUNT}){_SCALE_WORDS}|(?<![\d.,])({_AMOUNT}){_SCALE_WORDS}\s?({_CODE_PATTERN})\b)"
    r"(?=(.*))",
    re.DOTALL,
)
# A US ZIP code after its state ("Beverly Hills, CA 90210"), said digit by digit: it had been "ninety
# thousand two hundred and ten".
_STATES = (
    "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK "
    "OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR"
).split()
_ZIP = re.compile(
    rf"(?<=[^\W\d_],\s)({'|'.join(_STATES)})\s(\d{{5}})(?:-(\d{{4}}))?\b(?![.,]\d)(?!\s+(?:{COUNTED}|per|times|feet)\b)"
)
# A toll-free number spelt in letters (1-800-FLOWERS): "one eight hundred flowers", as its ads say it;
# it had been "one to eight hundred-flowers".
_VANITY_NUMBER = re.compile(r"(?<![\w+])\+?1[-.](8(?:00|33|44|55|66|77|88))[-.]([A-Z]{2,}(?:[-.][A-Z]{2,})?)\b")
# A model's number after its name in capitals (RTX 4090, GTX-1080, ISO 9001), said in pairs as a year
# is: "forty ninety", not "four thousand and ninety"; not a count or a measure after it ("CPU 2048
# cores", "RAM 2048 MB"), nor in text all in capitals.
_MEASURES = "MB|GB|TB|KB|kB|MHz|GHz|Hz|W|kW|V|mAh|mm|cm|m|km|kg|g|lbs?|rpm|fps|px|dpi|nits|hours?|years?|people"
_VERBS = "has|was|does|is|runs|gets|uses|needs|costs|comes|looks|seems|beats|offers|supports|draws|delivers"
_MODEL_NUMBER = re.compile(
    r"\b([A-Z]{2,5})([\s-]?)([1-9]\d{3})\b(?![.,]\d|\s?%)"
    rf"(?!\s+(?:(?!(?:{_VERBS})\b)[a-z]{{2,}}s|{_MEASURES})\b)"
)
# A model's letter after its number (Ryzen 9 7950X, GDDR6X): its letter, not "times" ("2X faster",
# "100X faster", "a 1000X return" are).
_MODEL_X = re.compile(
    r"(?<=[A-Z])(\d{1,2})X\b|(?<![\w.])([1-9](?!000)\d{3})X(\d?D?)\b"
    r"(?!\s+(?:faster|slower|more|less|better|worse|bigger|smaller|larger|higher|lower|returns?|zoom|speed|the)\b)"
)
# A letter, a dash and its number (F-150, B-52, I-95, Vitamin B-12): "F one fifty", as a model is said.
_LETTER_MODEL = re.compile(r"(?<![\w-])([A-Z])-(\d{2,3})\b(?![.,]\d|-)")
# A PIN and a port by their digits: "PIN 1234" is "one two three four", "port 8080" "eighty eighty".
_PIN = re.compile(r"\b(PINs?(?:\s(?:is|code|number|of))?:?\s)(\d{4,8})\b(?![.,]\d)")
_PORT = re.compile(r"\b([Pp]ort\s)(\d{4})\b(?![.,]\d)")
# Models in the plural (two A100s): "A one hundreds" (it had been "ahundreds"); a number in hexadecimal
# (0x80070005) by its digits; WWII, WW2: World War Two.
_MODELS = re.compile(r"\b([A-Z])-?(\d{2,4})s\b")
_HEX = re.compile(r"\b0x([0-9A-Fa-f]+)\b")
_WORLD_WAR = re.compile(r"\bWW(I{1,2}|[12])\b")


def _code_money(match: re.Match) -> str:
    """CAD 1.5 million: one point five million Canadian dollars; USD 20: $20, for the money reader."""
    code, amount, scale = match.group(1), match.group(2), match.group(3)
    if not code:
        code, amount, scale = match.group(6), match.group(4), match.group(5)
    if code in _CODE_SIGNS:
        return _CODE_SIGNS[code] + amount + (scale or "")
    if not re.match(_AFTER_MONEY, match.group(7)) or (not scale and re.fullmatch(r"(?:19|20)\d\d", amount)):
        return match.group(0)
    one, many = _CODE_NAMES[code]
    whole, _, part = amount.partition(".")
    if scale or not part:
        return f"{amount}{scale or ''} {one if amount == '1' and not scale else many}"
    cents = int(part.ljust(2, "0"))  # 20.50 CHF: twenty Swiss francs fifty, as a price is said
    return f"{whole} {one if whole == '1' else many}" + (f" {cents}" if cents else "")


def _model_said(digits: str) -> str:
    """A model's number as it is said: 150 one fifty, 52 fifty two, 100 one hundred."""
    number = int(digits)
    if number < 100 or len(digits) < 3:
        return _words(number, "en")
    if len(digits) == 4:
        return _words(number, "en", to="year")
    return _words(number // 100, "en") + " " + (_pair(number % 100) if number % 100 else "hundred")


def _letter_model(match: re.Match) -> str:
    return f"{match.group(1)} {_model_said(match.group(2))}"


def _plural(words: str) -> str:
    return words[:-1] + "ies" if words.endswith("y") else words + "s"  # fifty: fifties


def english_capitals(text: str) -> str:
    """What English text says by its capitals, read before it is lowered: an amount with its
    currency's code, a toll-free number in letters, a ZIP code after its state, a model's number after
    its name, a PIN and a port, a number in hexadecimal, a world war."""
    if "WW" in text:
        text = _WORLD_WAR.sub(lambda m: "World War " + ("One" if m.group(1) in ("I", "1") else "Two"), text)
    if not any(c.isdigit() for c in text):
        return text
    text = _HEX.sub(
        lambda m: "zero x " + " ".join(_words(int(c), "en") if c.isdigit() else c for c in m.group(1)), text
    )
    text = _MODELS.sub(lambda m: f"{m.group(1)} {_plural(_model_said(m.group(2)))}", text)
    text = _CODE_MONEY.sub(_code_money, text)
    text = _VANITY_NUMBER.sub(
        lambda m: " ".join(
            ["one", "eight hundred" if m.group(1) == "800" else " ".join(_DIGIT_NAMES[int(d)] for d in m.group(1))]
            + [m.group(2).replace("-", " ").replace(".", " ")]
        ),
        text,
    )
    text = _WEEKDAY_BEFORE_DATE.sub(lambda m: _WEEKDAYS[m.group(1).lower()], text)
    text = _ZIP.sub(lambda m: " ".join([*m.group(1), *(_DIGIT_NAMES[int(d)] for d in "".join(m.groups("")[1:]))]), text)
    text = _PIN.sub(lambda m: m.group(1) + " ".join(_DIGIT_NAMES[int(d)] for d in m.group(2)), text)
    text = _PORT.sub(lambda m: m.group(1) + _words(int(m.group(2)), "en", to="year"), text)
    text = _LETTER_MODEL.sub(_letter_model, text)
    text = _MODEL_X.sub(
        lambda m: (
            f" {_words(int(m.group(1)), 'en')} X"
            if m.group(1)
            else f" {_words(int(m.group(2)), 'en', to='year')} X" + (f" {' '.join(m.group(3))}" if m.group(3) else "")
        ),
        text,
    )
    if not any(c.islower() for c in text):  # all in capitals: "OVER 1010 PEOPLE" is a count
        return text
    return _MODEL_NUMBER.sub(
        lambda m: (
            m.group(1) + " " + _words(int(m.group(3)), "en", to="year") if m.group(1) not in _NO_MODEL else m.group(0)
        ),
        text,
    )


def _phone(match: re.Match) -> str:
    if len(re.sub(r"\D", "", match.group(0))) < 7:  # +12.5 points: a signed number, no telephone's digits
        return match.group(0)
    groups = re.findall(r"\+|\d+", match.group(0))
    said = ", ".join(" ".join(_DIGIT_NAMES[int(d)] for d in group) for group in groups if group != "+")
    return f"plus {said}" if groups[0] == "+" else said


# Money as these languages say an amount: "3,50 €" is "drei Euro fünfzig", "trois euros cinquante",
# "tres euros con cincuenta". Per language: the word before the cents, then per sign (one, many, or
# Russian and Polish's four forms, then "one" before the noun: the pound is feminine in French,
# Spanish, Italian and Portuguese, the euro neuter in Polish).
_MONEY_WORDS: dict[str, tuple[str, dict[str, tuple[str, ...]]]] = {
    "de": (
        "",
        {"\u20ac": ("euro", "euro", "ein"), "$": ("dollar", "dollar", "ein"), "\u00a3": ("pfund", "pfund", "ein")},
    ),
    "fr": (
        "",
        {"\u20ac": ("euro", "euros", "un"), "$": ("dollar", "dollars", "un"), "\u00a3": ("livre", "livres", "une")},
    ),
    "es": (
        "con",
        {
            "\u20ac": ("euro", "euros", "un"),
            "$": ("d\u00f3lar", "d\u00f3lares", "un"),
            "\u00a3": ("libra", "libras", "una"),
        },
    ),
    "it": (
        "e",
        {
            "\u20ac": ("euro", "euro", "un"),
            "$": ("dollaro", "dollari", "un"),
            "\u00a3": ("sterlina", "sterline", "una"),
        },
    ),
    "nl": (
        "",
        {"\u20ac": ("euro", "euro", "een"), "$": ("dollar", "dollar", "een"), "\u00a3": ("pond", "pond", "een")},
    ),
    "pt": (
        "e",
        {
            "\u20ac": ("euro", "euros", "um"),
            "$": ("d\u00f3lar", "d\u00f3lares", "um"),
            "\u00a3": ("libra", "libras", "uma"),
            "r$": ("real", "reais", "um"),  # Brazil's
        },
    ),
    "sv": (
        "",
        {
            "\u20ac": ("euro", "euro", "en"),
            "$": ("dollar", "dollar", "en"),
            "\u00a3": ("pund", "pund", "ett"),
            "kr": ("krona", "kronor", "en"),
            "sek": ("krona", "kronor", "en"),
        },
    ),
    "tr": (
        "",
        {
            "\u20ac": ("avro", "avro", "bir"),
            "$": ("dolar", "dolar", "bir"),
            "\u00a3": ("sterlin", "sterlin", "bir"),
            "tl": ("lira", "lira", "bir"),
            "\u20ba": ("lira", "lira", "bir"),
        },
    ),
    # Russian and Polish decline the noun with the number (_slavic_form); the euro does not.
    "ru": (
        "",
        {
            "\u20ac": ("евро", "евро", "евро", "евро", "один"),
            "$": ("доллар", "доллара", "долларов", "доллара", "один"),
            "\u00a3": ("фунт", "фунта", "фунтов", "фунта", "один"),
            **dict.fromkeys(("\u20bd", "руб.", "руб", "р."), ("рубль", "рубля", "рублей", "рубля", "один")),
        },
    ),
    "pl": (
        "",
        {
            "\u20ac": ("euro", "euro", "euro", "euro", "jedno"),
            "$": ("dolar", "dolary", "dolarów", "dolara", "jeden"),
            "\u00a3": ("funt", "funty", "funtów", "funta", "jeden"),
            "zł": ("złoty", "złote", "złotych", "złotego", "jeden"),
        },
    ),
}
# An amount under one is said in its hundredths: "0,99 €" is neunundneunzig Cent, noventa y nueve
# céntimos, quatre-vingt-dix-neuf centimes (singular, plural, the article of one). Russian and Polish,
# whose kopeck and grosz take a feminine or other number, keep "ноль рублей девяносто".
_HUNDREDTHS: dict[str, dict[str, tuple[str, str, str]]] = {
    "de": {"\u20ac": ("cent", "cent", "ein"), "$": ("cent", "cent", "ein"), "\u00a3": ("penny", "pence", "ein")},
    "fr": {"\u20ac": ("centime", "centimes", "un"), "$": ("cent", "cents", "un"), "\u00a3": ("penny", "pence", "un")},
    "es": {
        "\u20ac": ("c\u00e9ntimo", "c\u00e9ntimos", "un"),
        "$": ("centavo", "centavos", "un"),
        "\u00a3": ("penique", "peniques", "un"),
    },
    "it": {
        "\u20ac": ("centesimo", "centesimi", "un"),
        "$": ("centesimo", "centesimi", "un"),
        "\u00a3": ("penny", "pence", "un"),
    },
    "nl": {"\u20ac": ("cent", "cent", "een"), "$": ("cent", "cent", "een"), "\u00a3": ("penny", "pence", "een")},
    "pt": {
        "\u20ac": ("c\u00eantimo", "c\u00eantimos", "um"),
        "$": ("centavo", "centavos", "um"),
        "r$": ("centavo", "centavos", "um"),
    },
    "sv": {
        "\u20ac": ("cent", "cent", "en"),
        "$": ("cent", "cent", "en"),
        "kr": ("\u00f6re", "\u00f6re", "ett"),
        "sek": ("\u00f6re", "\u00f6re", "ett"),
    },
    "tr": {
        "\u20ac": ("sent", "sent", "bir"),
        "$": ("sent", "sent", "bir"),
        "tl": ("kuru\u015f", "kuru\u015f", "bir"),
        "\u20ba": ("kuru\u015f", "kuru\u015f", "bir"),
    },
}
# Latin America writes its pesos with "$" (CLDR), and its amounts with a decimal point.
_PESOS = ("peso", "pesos", "un")
_COMMA_AMOUNT = r"(\d{1,3}(?:[.\u00a0\u202f ]\d{3})+|\d+)(?:,(\d\d))?(?!\d)"
_POINT_AMOUNT = r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d\d))?(?!\.?\d)"
# An amount with cents before the currency's name or code reads as before its sign: "2,50 Euro" is
# zwei euro fünfzig, not zwei komma fünf euro.
_CURRENCY_NAMES = {
    "\u20ac": r"euros?|eur",
    "$": r"dollars?|dólares|dollari|usd",
    "\u00a3": r"pfund|livres?|libras?|sterline|pond|gbp",
}


def _money_pattern(language: str, comma: bool) -> re.Pattern:
    """The language's amounts before or after a sign it knows (€, $, £ and its own: zł, kr, ₽, TL, R$)."""
    signs = "|".join(re.escape(sign) for sign in sorted(_MONEY_WORDS[language][1], key=len, reverse=True))
    amount = _COMMA_AMOUNT if comma else _POINT_AMOUNT
    return re.compile(rf"({signs})\s?{amount}|\b{amount}\s?({signs})(?![^\W\d_])", re.IGNORECASE)


def _currency_names(text: str, comma: bool, pesos: bool) -> str:
    cents = r"(\d+,\d\d)" if comma else r"(\d+\.\d\d)"
    for sign, names in _CURRENCY_NAMES.items():
        if pesos and sign == "$":  # "$" is pesos there; 2.50 dólares stays dollars
            continue
        text = re.sub(rf"{cents}\s+(?:{names})\b", rf"\1 {sign}", text, flags=re.IGNORECASE)
    return text


def _money(match: re.Match, language: str, pesos: bool) -> str:
    sign, whole_text, cents_text = match.group(1, 2, 3) if match.group(1) else match.group(6, 4, 5)
    whole = int(re.sub(r"\D", "", whole_text))
    before_cents, nouns = _MONEY_WORDS[language]
    cents = int(cents_text) if cents_text else 0
    hundredths = _HUNDREDTHS.get(language, {}).get(sign.lower())
    if whole == 0 and cents and hundredths is not None:
        one, many, a = hundredths
        return f"{a} {one}" if cents == 1 else f"{_words(cents, language)} {many}"
    *forms, article = _PESOS if pesos and sign == "$" else nouns[sign.lower()]
    noun = _slavic_form(str(whole), forms, language) if len(forms) == 4 else forms[whole != 1]
    said = f"{article if whole == 1 else _words(whole, language)} {noun}"
    if cents:
        said += f"{' ' + before_cents if before_cents else ''} {_words(cents, language)}"
    return said


# German writes a day as an ordinal with a full stop: "am 3. Mai" is "am dritten Mai", "der 3. Mai"
# "der dritte Mai" (the ending follows the case: -n after am, vom, zum, bis, bis zum, seit dem, den).
GERMAN_MONTHS = "januar|jänner|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember"
_GERMAN_WEEKDAYS = "montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag"
# "am Samstag, 4. Mai": the weekday between, the day still am's (vierten).
_GERMAN_DATE = re.compile(
    rf"(?:\b(am|vom|zum|im|dem|den|des|bis)\s+((?:{_GERMAN_WEEKDAYS}),?\s+(?:(?:dem|den)\s+)?)?)?\b([1-9]|[12]\d|3[01])\.\s+"
    rf"(?=(?:{GERMAN_MONTHS})\b)",
    re.IGNORECASE,
)
# Any ordinal after an article, a preposition with one or a word declined as one, by the ending it
# gives: -e as after der ("der 2. Platz", "jeder 5. Deutsche", "seine 3. Frau"), -en after a dative or
# genitive ("im 3. Stock", "seinen 100. Geburtstag"), and after an ein-word with no ending -er, or -es
# before a neuter noun ("sein 2. Versuch", "sein 2. Buch": the nouns `agreement` knows neuter, by
# ending or by name). "zum 1.000. Mal": thousands grouped with dots.
_DETERMINER_E = r"der|die|das|ins|jede[rs]?|diese[rs]?|jene[rs]?|(?:mein|dein|sein|ihr|unser|eur|euer|kein|ein)e"
_DETERMINER_EN = (
    r"am|vom|zum|im|beim|zur|dem|den|des|jede[mn]|diese[mn]|jene[mn]|(?:mein|dein|sein|ihr|unser|eur|kein|ein)e[mnrs]"
)
_DETERMINER_BARE = r"mein|dein|sein|ihr|unser|euer|kein|ein"
# The words before an ordinal but der, die and das (sentence splitting takes those only at its start:
# "Ich nahm die 3. Das war gut").
GERMAN_ORDINAL_AFTER = rf"{_DETERMINER_EN}|ins|jede[rs]?|diese[rs]?|jene[rs]?|(?:mein|dein|sein|ihr|unser|eur|euer|kein|ein)e|{_DETERMINER_BARE}"
GERMAN_ORDINAL_NUMBER = r"(?:\d{1,4}|\d{1,3}(?:\.\d{3})+)"
# Words that start a sentence and are no noun. After a word that is a pronoun as often as a determiner,
# a number before one is counted, not ranked: "Er gab ihr 5. Dann ging er." is five, and two sentences.
GERMAN_NOT_COUNTED = (
    r"dann|danach|damals|dort|da|die|der|das|dem|den|des|sie|er|es|wir|ich|ihr|du|man|aber|doch|nun|"
    r"jetzt|heute|morgen|gestern|auch|hier|deshalb|also|ein|eine|mein|meine|sein|seine|dies|diese|"
    r"dieser|kein|keine|was|wer|wie|wo|warum|bitte|ja|nein|nicht|noch|schon|alle|alles|mehr|weiter"
)
# An article or a preposition with one ranks the number before any word ("am 24. und 25. Dezember",
# "der 1. Die anderen"), and a preposition's at the text's end too ("Wir sehen uns am 5."), as is der's
# after a verb that names a day ("Heute ist der 12."), dem's after seit, ab, nach, vor or bis ("seit dem
# 3."), and a weekday's or a letter's date ("Freitag, den 13.", "Berlin, den 5.", "haben wir den 1."):
# "einer der 12.", "mit den 12." count; the words that are pronouns too, only before a word that may
# be its noun.
_GERMAN_PREPOSITIONS = r"am|vom|zum|im|beim|zur|ins"
_GERMAN_ORDINAL_STRONG = re.compile(
    rf"\b({_GERMAN_PREPOSITIONS}|der|die|das|dem|den|des)\s+({GERMAN_ORDINAL_NUMBER})\.\s+(?=([^\W\d_]+))"
    rf"|\b({_GERMAN_PREPOSITIONS}|(?:ist|war|wird|wurde|sei|wäre|bleibt)\s+der|(?:seit|ab|nach|vor|bis)\s+dem"
    rf"|(?:{_GERMAN_WEEKDAYS}),?\s+(?:der|den|dem)|(?<=[^\W\d_]),\s+den|haben\s+(?:wir\s+)?(?:heute\s+)?den)"
    rf"\s+({GERMAN_ORDINAL_NUMBER})\.(?=\s*$)",
    re.IGNORECASE,
)
_NOT_COUNTED_WORD = re.compile(rf"(?:{GERMAN_NOT_COUNTED})", re.IGNORECASE)
# A second ordinal after "und", "oder" or "bis" takes the first's ending: "die 1. und 2. Klasse" is die
# erste und zweite Klasse, "am 3. oder 4. Juli" am dritten oder vierten Juli.
_GERMAN_ORDINAL_WORD = (
    r"(?:erste|zweite|dritte|vierte|fünfte|sechste|siebte|achte|neunte|zehnte|elfte|zwölfte|zigste|ßigste|"
    r"hundertste|tausendste)"
)
# ... a day too: "am 24. und 25. Dezember" is am vierundzwanzigsten und fünfundzwanzigsten Dezember.
_GERMAN_SECOND_DAY = re.compile(
    rf"\b(\w*{_GERMAN_ORDINAL_WORD}n\s+(?:und|oder|bis)\s+\w*{_GERMAN_ORDINAL_WORD})(?=\s+(?:{GERMAN_MONTHS})\b)",
    re.IGNORECASE,
)
# ... and the first of a span of days with no article, where a span starts ("Ferien: 1. bis 3. Mai" is
# ersten bis dritten Mai; after a noun it may be a count, "Kapitel 3. Bis 15. Mai ...", lowered; after an
# article, its case's ending: "der 1. bis 3. Mai" is der erste bis dritte).
_GERMAN_FIRST_DAY = re.compile(
    rf"(?:^|(?<=[,(\u2013-])|(?<=[,(\u2013-]\s)|(?<=:\s)|\b(von|vom|geöffnet|täglich|jeweils)\s+)([1-9]|[12]\d|3[01])\.\s+(?=bis\s+(?:zum\s+)?(?:[1-9]|[12]\d|3[01])\.\s+(?:{GERMAN_MONTHS})\b)",
    re.IGNORECASE,
)
_GERMAN_SECOND_ORDINAL = re.compile(
    rf"\b(\w*{_GERMAN_ORDINAL_WORD})([nrsm]?)(\s+(?:und|oder|bis)\s+)({GERMAN_ORDINAL_NUMBER})\.\s+(?=[^\W\d_])",
    re.IGNORECASE,
)
_GERMAN_ORDINAL = re.compile(
    rf"\b({_DETERMINER_E}|{_DETERMINER_EN}|{_DETERMINER_BARE})\s+({GERMAN_ORDINAL_NUMBER})\.\s+"
    rf"(?!(?:{GERMAN_NOT_COUNTED})\b)(?=([^\W\d_]+))",
    re.IGNORECASE,
)


# A time of day as each language reads one: "9:30" is neun uhr dreißig, negen uur dertig, neuf
# heures trente, nove horas e trinta, nueve y treinta, nove e trenta; French and Portuguese also
# write 9h30 and 17 h, German and Dutch 9:30 Uhr. Elsewhere the hour, then the minutes (девять
# тридцать, dokuz sıfır beş); on the hour, the hour alone.
_CLOCK_NOUNS = {"de": "uhr", "nl": "uur"}
_HOUR_NOUNS = {"fr": ("heure", "heures", ""), "pt": ("hora", "horas", "e ")}
_CLOCK_AND = {"es": "y", "it": "e"}
# The hour is "ein" in German and feminine in the Romance languages (une heure, la una, duas horas).
_HOUR_FORMS = {
    "de": ((r"^eins$", "ein"),),
    "fr": ((r"\bun$", "une"),),
    "es": ((r"uno$", "una"),),
    "it": ((r"^uno$", "una"),),
    "pt": ((r"\bum$", "uma"), (r"\bdois$", "duas")),
}
_HOUR = r"\b([01]?\d|2[0-3])"
_H_TIME = re.compile(rf"{_HOUR}\s?h(?:\s?([0-5]\d))?(?![^\W_])")  # 9h30, 17 h


# Many write a time with a dot: "um 9.30 Uhr", "om 20.45 uur", "kl. 9.30", "godz. 14.15", "в 14.15",
# "saat 09.00-18.00", "alle 9.30". Where a word before it or the clock's noun after it says it is one,
# or it is a range of two, it is written with a colon and read as the time it is (not nine comma three).
_DOT_TIME_CUES = {
    "de": "um|ab|bis|gegen|von",
    "nl": "om|vanaf|tot|van",
    "it": "alle|dalle|ore",
    "sv": r"kl\.?|klockan",
    "no": r"kl\.?|klokka(?: er)?|klokken(?: er)?",  # "Klokka er 5.30"
    "da": r"kl\.?|klokken(?: er)?",
    "tr": "saat",
    "pl": r"godz\.?|godzina|o|od|do",
    "ru": "\u0432|\u0441|\u0434\u043e|\u043a",  # в, с, до, к
    "es": "las",
}
_DOT_TIME = r"\b([01]?\d|2[0-3])\.([0-5]\d)(?![\d.,]?\d)"


def _dotted_times(text: str, language: str) -> str:
    text = re.sub(rf"{_DOT_TIME}(\s?[-\u2013]\s?){_DOT_TIME}", r"\1:\2\3\4:\5", text)
    if language in _DOT_TIME_CUES:
        text = re.sub(rf"\b((?:{_DOT_TIME_CUES[language]})\s+){_DOT_TIME}", r"\1\2:\3", text, flags=re.IGNORECASE)
    if language in _CLOCK_NOUNS:
        text = re.sub(rf"{_DOT_TIME}(?=\s+{_CLOCK_NOUNS[language]}\b)", r"\1:\2", text, flags=re.IGNORECASE)
    if language == "tr":  # a case ending after it says it is a time: "7.05'te kalkıyor", "13.45'ten sonra"
        text = re.sub(rf"{_DOT_TIME}(?=['\u2019](?:te|ta|de|da|ten|tan|den|dan|e|a|ye|ya)\b)", r"\1:\2", text)
    if language == "sv":  # "kommer fram 13.45", "öppnar 9.30": Swedish writes its times so
        text = re.sub(
            rf"\b((?:kommer fram|fram|öppnar|stänger|går|avgår|börjar|slutar)\s+){_DOT_TIME}", r"\1\2:\3", text
        )
    return text


# h:mm:ss as a duration (2:30:15, as English reads it): each unit's "one" and its plural, and the
# word before the last. A language not here says the three numbers, not their colons.
_DURATION_UNITS = {
    "de": (("eine stunde", "stunden"), ("eine minute", "minuten"), ("eine sekunde", "sekunden"), "und"),
    "fr": (("une heure", "heures"), ("une minute", "minutes"), ("une seconde", "secondes"), "et"),
    "es": (("una hora", "horas"), ("un minuto", "minutos"), ("un segundo", "segundos"), "y"),
    "it": (("un'ora", "ore"), ("un minuto", "minuti"), ("un secondo", "secondi"), "e"),
    "pt": (("uma hora", "horas"), ("um minuto", "minutos"), ("um segundo", "segundos"), "e"),
    "nl": (("een uur", "uur"), ("een minuut", "minuten"), ("een seconde", "seconden"), "en"),
    "sv": (("en timme", "timmar"), ("en minut", "minuter"), ("en sekund", "sekunder"), "och"),
    "tr": (("bir saat", "saat"), ("bir dakika", "dakika"), ("bir saniye", "saniye"), "ve"),
}


def _duration_pattern(language: str) -> re.Pattern:
    """h:mm:ss, and the clock's noun after it where the language says one (10:30:15 Uhr)."""
    noun = rf"(\s+{_CLOCK_NOUNS[language]}\b)?" if language in _CLOCK_NOUNS else "()"
    return re.compile(_DURATION.pattern + noun, re.IGNORECASE)


def _duration_of(match: re.Match, language: str, clock: re.Pattern) -> str:
    """10:30:15 as a duration in `language` ("zehn stunden, dreißig minuten und fünfzehn sekunden"),
    or, before the clock's noun, the time of day and its seconds ("zehn uhr dreißig und fünfzehn
    sekunden"); each number alone where the language has no units here (the colons had been read)."""
    hours, minutes, seconds = (int(match.group(i)) for i in (1, 2, 3))
    units = _DURATION_UNITS.get(language)
    if units is None:
        return " ".join(_words(n, language) for n in (hours, minutes, seconds))
    (one, many), join = units[2], units[3]
    second = one if seconds == 1 else f"{_words(seconds, language)} {many}"
    if match.group(4) and hours < 24:
        time = clock.sub(lambda m: _time_of_day(m, language), f"{hours}:{minutes:02d}{match.group(4)}")
        return f"{time} {join} {second}" if seconds else time
    said = [
        single if n == 1 else f"{_words(n, language)} {plural}"
        for n, (single, plural) in zip((hours, minutes, seconds), units[:3])
        if n
    ]
    if not said:
        return f"{_words(0, language)} {many}"
    return f"{', '.join(said[:-1])} {join} {said[-1]}" if len(said) > 1 else said[0]


def _time_pattern(language: str) -> re.Pattern:
    noun = rf"(?:\s+{_CLOCK_NOUNS[language]}\b)?" if language in _CLOCK_NOUNS else ""
    return re.compile(rf"{_HOUR}:([0-5]\d)(?!\d|:\d){noun}", re.IGNORECASE)


# Polish says the hour as a feminine ordinal (godzina dziesiąta), in the genitive or locative after
# o, od, do, po (o dziesiątej, od dziewiątej do siedemnastej); the minutes as a count.
_POLISH_HOURS = (
    "zero pierwsza druga trzecia czwarta piąta szósta siódma ósma dziewiąta dziesiąta jedenasta dwunasta "
    "trzynasta czternasta piętnasta szesnasta siedemnasta osiemnasta dziewiętnasta dwudziesta"
).split()
_POLISH_HOUR_CASE = re.compile(r"\b(?:o|od|do|po|przed|około|koło|między|pomiędzy|a)\s+$", re.IGNORECASE)


def _polish_hour(hour: int, text: str, start: int) -> str:
    said = _POLISH_HOURS[hour] if hour <= 20 else f"dwudziesta {_POLISH_HOURS[hour - 20]}"
    if _POLISH_HOUR_CASE.search(text, 0, start):
        said = re.sub(r"a\b", "ej", said)
    return said


def _time_of_day(match: re.Match, language: str) -> str:
    hour, minutes = int(match.group(1)), int(match.group(2) or 0)
    said = _polish_hour(hour, match.string, match.start()) if language == "pl" else _words(hour, language)
    for pattern, form in _HOUR_FORMS.get(language, ()):
        said = re.sub(pattern, form, said)
    after = _words(minutes, language) if minutes else ""
    if language in _CLOCK_NOUNS:
        return f"{said} {_CLOCK_NOUNS[language]} {after}".rstrip()
    if language in _HOUR_NOUNS:
        one, many, join = _HOUR_NOUNS[language]
        return f"{said} {one if hour <= 1 else many} {join + after if after else ''}".rstrip()
    if not minutes:
        return said
    if language in _CLOCK_AND:
        return f"{said} {_CLOCK_AND[language]} {after}"
    return f"{said} {_words(0, language) + ' ' if minutes < 10 else ''}{after}"


# Ordinals as each language marks them (1er, 2e; 1º, 1ª, 1.er; 1e, 2de, 8ste; 1:a, 3:e), with what
# the marker says of the word: "f" feminine (the -o of each word to -a), "short" Spanish's primer and tercer.
_ORDINALS: dict[str, tuple[re.Pattern, dict[str, str]]] = {
    "fr": (re.compile(r"\b(\d+)(er|re|\u00e8re|e|\u00e8me|eme)\b", re.IGNORECASE), {"re": "f", "\u00e8re": "f"}),
    # º and ª, or the o and a that multilingual_cleaners' NFKC makes of them (1.º de mayo: 1.o de mayo)
    "es": (re.compile(r"\b(\d+)\.?(\u00ba|\u00aa|er\b|[oa]\b)"), {"\u00aa": "f", "a": "f", "er": "short"}),
    "pt": (re.compile(r"\b(\d+)\.?(\u00ba|\u00aa|[oa]\b)"), {"\u00aa": "f", "a": "f"}),
    "it": (re.compile(r"\b(\d+)(\u00ba|\u00aa|[oa]\b)"), {"\u00aa": "f", "a": "f"}),
    "nl": (re.compile(r"\b(\d+)(e|de|ste)\b", re.IGNORECASE), {}),
    "sv": (re.compile(r"\b(\d+):(a|e)\b", re.IGNORECASE), {}),
    # Turkish marks an ordinal with a full stop before its noun: 16. yüzyıl (on altıncı yüzyıl)
    "tr": (re.compile(r"\b(\d+)(\.)(?=\s+[^\W\d_])"), {}),
}


# Spanish shortens primero and tercero before the masculine noun they count: "el 1.º piso" is el primer
# piso ("el 1.º de mayo" stays primero).
_SPANISH_NOUN_AFTER = re.compile(
    r"\s+(?!(?:de|del|y|o|e|en|a|al|que|con|se|lo|la|le|les|los|las|me|te|nos|su|sus|fue|es|era|será|ha|había|está|"
    r"estaba|quedó|llegó|ganó|más|menos|por|para|tras|sin|como|entre|sobre|desde|hasta|ante|y)\b)[^\W\d_]"
)


def _ordinal_form(match: re.Match, language: str, endings: dict[str, str]) -> str:
    form = endings.get(match.group(2).lower(), "")
    if language == "es" and form == "" and _SPANISH_NOUN_AFTER.match(match.string, match.end()):
        return "short"
    return form


def _ordinal(number: int, language: str, form: str) -> str:
    said = _words(number, language, to="ordinal")
    if form == "f" and language == "fr":
        return "premi\u00e8re" if number == 1 else said
    if form == "f":
        return re.sub(r"o\b", "a", said)
    if form == "short":
        return re.sub(r"(primer|tercer)o$", r"\1", said)  # primero piso -> primer piso; segundo stays
    return said


# German, Dutch, Swedish, Norwegian and Danish read a year before 2000 in hundreds (neunzehnhundertneunzig,
# negentienhonderdnegentig, nittonhundranittio, attenhundreogfjorten), where a count is tausend; a year is
# a four-digit number after a word that says so (im Jahr, seit, bis, a month), with a second after it in a range.
_YEAR_WORDS = {
    "de": f"im jahre?|jahre?|seit|bis|von|ab|um|vor|nach|anno|zwischen|{GERMAN_MONTHS}|"
    "sommer|winter|herbst|frühjahr|frühling|anfang|mitte|ende",  # im Sommer 1999, Ende 1989
    "nl": "in|sinds|tot|van|vanaf|rond|voor|na|jaar|tussen|januari|februari|maart|april|mei|juni|juli|augustus|"
    "september|oktober|november|december",
    "sv": "år|i|sedan|till|från|före|efter|runt|mellan|januari|februari|mars|april|maj|juni|juli|augusti|"
    "september|oktober|november|december",
    "no": "året|år|i|siden|til|fra|før|etter|mellom|januar|februar|mars|april|mai|juni|juli|august|"
    "september|oktober|november|desember",
    "da": "året|år|i|siden|til|fra|før|efter|mellem|januar|februar|marts|april|maj|juni|juli|august|"
    "september|oktober|november|december",
}
_MONTH_WORDS = {
    "no": "januar februar mars april mai juni juli august september oktober november desember",
    "da": "januar februar marts april maj juni juli august september oktober november december",
    "sv": "januari februari mars april maj juni juli augusti september oktober november december",
}
_RANGE_WORDS = {"de": "bis|und", "nl": "tot|en", "sv": "till|och", "no": "til|og", "da": "til|og"}


# An amount after a year's word is no year: "am Ende 1500 Euro", "vor 1200 Menschen".
_AMOUNT_AFTER = (
    r"(?!\s*(?:[\u20ac$\u00a3%]|(?:euro|dollar|pfund|franken|prozent|procent|prosent|kronor|kroner|kr|menschen|"
    r"leute|mensen|personen|personer|mennesker|"
    r"besucher|g\u00e4ste|teilnehmer|einwohner|st\u00fcck|mal|meter|kilometer|km|m|kg|tonnen|seiten)\b))"
)


# Norwegian, Danish and Swedish put a count's noun after it in lower case ("i 1200 meters højde", "föddes
# 1200 barn", "etter 1500 forsøk"): after a word that may begin either (Norwegian's and Danish's but år and
# a month; Swedish's föddes), a year is one its clause goes on from, with punctuation, the text's end or
# one of these words after it (a preposition, or the verb a fronted "Siden 1995" puts next).
_YEAR_GOES_ON = {
    "no": "i|på|da|men|som|etter|før|med|ved|fra|under|mot|er|var|ble|har|hadde|kom|fikk|gikk|bor|bodde|"
    "begynte|startet|flyttet|døde|kjøpte|solgte|vant|tapte|spilte|jobbet|studerte|giftet|åpnet|stengte",
    "da": "i|på|da|men|som|efter|før|med|ved|fra|under|mod|er|var|blev|har|havde|kom|fik|gik|bor|boede|"
    "begyndte|startede|flyttede|døde|købte|solgte|vandt|tabte|spillede|arbejdede|studerede|giftede|åbnede|lukkede",
    "sv": "i|på|då|men|som|efter|före|med|vid|från|under|mot|av|för|är|var|blev|har|hade|kom|fick|gick|bor|bodde",
}
_UNSURE_YEAR_CUES = {"sv": {"föddes"}}  # and every cue of no and da but år, året and a month


def _year_pattern(language: str) -> re.Pattern:
    year = rf"(1[1-9]\d\d)(?![\d.,]\d){_AMOUNT_AFTER}"
    second = rf"(?:(\s*[-\u2013]\s*|\s+(?:{_RANGE_WORDS[language]})\s+){year})?"
    cues = f"{_YEAR_WORDS[language]}|{_YEAR_VERBS[language][0]}"
    if language not in _YEAR_GOES_ON:
        return re.compile(rf"\b((?:{cues})\s+){year}{second}", re.IGNORECASE)
    unsure_of = _UNSURE_YEAR_CUES.get(language)
    sure = [
        cue
        for cue in cues.split("|")
        if (cue not in unsure_of if unsure_of else cue in ("år", "året") or cue in _MONTH_WORDS[language].split())
    ]
    unsure = "|".join(cue for cue in cues.split("|") if cue not in sure)
    and_ = _RANGE_WORDS[language].split("|")[1]
    goes_on = rf"\s*(?:[^\w\s]|$)|\s+(?:{_YEAR_GOES_ON[language]})\b|\s+{and_}\b(?!\s*\d)"
    span = rf"(?:\s*[-\u2013]\s*|\s+(?:{_RANGE_WORDS[language]})\s+)1[1-9]\d\d"
    before = rf"((?:{'|'.join(sure)})\s+|(?:{unsure})\s+(?=1[1-9]\d\d(?:{span})?(?:{goes_on})))"
    return re.compile(rf"\b{before}{year}{second}", re.IGNORECASE)


def _year_before_pattern(language: str) -> re.Pattern:
    return re.compile(rf"(?<![\d.,])(1[1-9]\d\d)(?=\s+(?:{_YEAR_VERBS[language][1]})\b)", re.IGNORECASE)


def _year_in_hundreds(year: str, language: str) -> str:
    if language == "sv":  # num2words has no Swedish years: nitton hundra nittio
        rest = int(year[2:])
        return _words(int(year[:2]), "sv") + "hundra" + (_words(rest, "sv") if rest else "")
    if language == "da":  # num2words' Danish years leave out the "og": nittenhundrede og syvogfirs
        rest = int(year[2:])
        return _words(int(year[:2]), "da") + "hundrede" + (f" og {_words(rest, 'da')}" if rest else "")
    return _words(int(year), language, to="year").replace(" ", "")


def _years_in_hundreds(match: re.Match, language: str) -> str:
    before, first, between, second = match.groups()
    said = before + _year_in_hundreds(first, language)
    if second is None:
        return said
    if between.strip() in ("-", "\u2013"):  # 1939-1945: bis, tot, till
        between = f" {_RANGE_WORDS[language].split('|')[0]} "
    return said + between + _year_in_hundreds(second, language)


# A date in digits, day first (14.07.2020, 14/07/2020, 14-07-2020) or ISO's year first (2020-07-14),
# turned into the way each language writes it with the month's name, which the passes after read:
# "3. oktober 1990" (then am dritten oktober neunzehnhundertneunzig), "14 de julio de 2020", "14-е
# июля 2020 года". German also writes a day and month alone: "am 3.10.".
_MONTH_NAMES_OF = {
    "de": "januar februar märz april mai juni juli august september oktober november dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
    "sv": "januari februari mars april maj juni juli augusti september oktober november december",
    "tr": "ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık",
    "pl": "stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października listopada grudnia",
    "ru": "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
}
# (with a year, without one); {d} is the day as the ordinal passes expect it (1er, 1º, 3., 14-е).
_DATE_FORMS = {
    "de": ("{d}. {m} {y}", "{d}. {m}"),
    "fr": ("{d} {m} {y}", "{d} {m}"),
    "es": ("{d} de {m} de {y}", "{d} de {m}"),
    "it": ("{d} {m} {y}", "{d} {m}"),
    "pt": ("{d} de {m} de {y}", "{d} de {m}"),
    "ru": ("{d}-го {m} {y} года", "{d}-го {m}"),
}
_FIRST_OF_MONTH = {"fr": "1er", "it": "1\u00ba", "pt": "1\u00ba"}
# Russian's "г." or "года" after the year is the "года" its form says: taken in.
_YEAR_NOUN = r"(?:\s*г\.|\s+года\b)?"
_DAY_FIRST_DATE = re.compile(rf"(?<![\d.,/-])(\d{{1,2}})([./-])(\d{{1,2}})\2(\d{{4}}|\d\d)(?![.,/-]?\d){_YEAR_NOUN}")
_ISO_DATE = re.compile(rf"(?<![\d.,/-])(\d{{4}})-(\d\d)-(\d\d)(?![.,/-]?\d){_YEAR_NOUN}")
_GERMAN_DAY_MONTH = re.compile(r"(?<![\d.,])(\d{1,2})\.(\d{1,2})\.(?!\d)")


# A range between two numbers ("10-15 Minuten", "de 10 à 15"), said with the language's "to"; not a
# telephone number's dash (030-1234567: no number starts with 0 here, nor has more than four digits).
# A number that starts with 0 (a telephone number, a code: 030-1234567, 007) is read digit by digit in
# its groups, as the English one is.
_ZERO_LED = re.compile(r"(?<![\d.,])(?<!\d[ \u00a0\u202f])0\d{2,}(?:[-/ ]\d{3,})*(?![.,]?\d)")  # not 1 000
_RANGE_TO = {"de": "bis", "fr": "\u00e0", "es": "a", "pt": "a", "nl": "tot", "sv": "till"}
_RANGE = re.compile(r"(?<![\d.,/-])([1-9]\d{0,3}(?:,\d+)?)\s?[-\u2013]\s?(?=[1-9]\d{0,3}(?:,\d+)?(?![\d.,/-]?\d))")


def _named_date(day: str, month: str, year: str | None, language: str, text: str) -> str:
    d, m = int(day), int(month)
    if not (1 <= d <= 31 and 1 <= m <= 12):
        return text
    name = _MONTH_NAMES_OF[language].split()[m - 1]
    with_year, alone = _DATE_FORMS.get(language, ("{d} {m} {y}", "{d} {m}"))
    said_day = _FIRST_OF_MONTH.get(language, str(d)) if d == 1 else str(d)
    return (with_year if year else alone).format(d=said_day, m=name, y=year)


# Russian, Polish and Swedish read the day before a month's name as an ordinal, the Slavic ones in
# the genitive dates are said in: "12 апреля 1961 г." is двенадцатого апреля тысяча девятьсот
# шестьдесят первого года, "11 listopada 1918 r." jedenastego listopada tysiąc dziewięćset
# osiemnastego roku ("w 1410 roku": w tysiąc czterysta dziesiątym roku), "1 januari" första januari.
_DAY_BEFORE_MONTH = {
    language: re.compile(rf"\b([12]?\d|3[01])\s+(?=(?:{_MONTH_NAMES_OF[language].replace(' ', '|')})\b)", re.IGNORECASE)
    for language in ("ru", "pl", "sv")
}
_RUSSIAN_YEAR_ABBREVIATION = re.compile(r"(?<![\d.,])([1-9]\d{2,3})\s*г\.")
_POLISH_YEAR = re.compile(r"(?:\b(w)\s+)?(?<![\d.,])([1-9]\d{2,3})\s*(?:r\.|roku\b)", re.IGNORECASE)


def _polish_ordinal(number: int, locative: bool) -> str:
    """An ordinal in the genitive (jedenastego) or, after "w", the locative (dziesiątym): each of its
    adjectives declines (dwudziestego pierwszego; drugi: drugiego, drugim)."""

    def declined(word: str) -> str:
        if word.endswith("y"):
            return word[:-1] + ("ym" if locative else "ego")
        if word.endswith("i"):
            return word + ("m" if locative else "ego")
        return word

    return " ".join(declined(word) for word in _words(number, "pl", to="ordinal").split())


# The sign before a number said (+3 °C: plus drei grad celsius; a telephone number's + is not: +49 30 ...),
# a price's ",-" (49,- €) left out, a German score (3:1: drei zu eins), and decades: German "1990er"
# (neunzehnhundertneunziger), Swedish "1800-talet" (artonhundratalet).
_PLUS_WORDS = {
    "de": "plus",
    "fr": "plus",
    "es": "más",
    "it": "più",
    "pt": "mais",
    "nl": "plus",
    "pl": "plus",
    "sv": "plus",
    "tr": "artı",
    "ru": "плюс",
}
_PLUS = re.compile(r"(?<![\w.,+])\+(?=\d{1,3}(?:[.,]\d+)?(?![\d.,]|\s?\d))")
_INTERNATIONAL_PHONE = re.compile(r"(?<![\w.,+])\+\d{1,3}(?:[ -]\(?\d+\)?){2,6}(?![.,]?\d)")
_NO_CENTS = re.compile(r"(?<=\d),-(?!\d)")
_GERMAN_SCORE = re.compile(r"(?<![\d:.,])(\d{1,2}):(\d)(?![\d:])")
# "1 Mio.", read out as "1 millionen" first: eine million, as 1 Stunde is eine stunde.
_GERMAN_ONES = {"millionen": "eine million", "milliarden": "eine milliarde", "stunden": "eine stunde"}
_GERMAN_ONE = re.compile(r"(?<![\d.,])1\s+(millionen|milliarden|stunden)\b", re.IGNORECASE)
_DECADES = {"de": re.compile(r"\b(\d{2,4})er\b"), "sv": re.compile(r"\b(\d{2,4})-talet\b")}
# Halves, thirds and quarters as each language says them ("1/2 Liter": einhalb liter, not eins/zwei).
_FRACTION_WORDS = {
    "de": ("einhalb", "ein drittel", "zwei drittel", "ein viertel", "drei viertel"),
    "fr": ("un demi", "un tiers", "deux tiers", "un quart", "trois quarts"),
    "es": ("medio", "un tercio", "dos tercios", "un cuarto", "tres cuartos"),
    "it": ("mezzo", "un terzo", "due terzi", "un quarto", "tre quarti"),
    "pt": ("meio", "um terço", "dois terços", "um quarto", "três quartos"),
    "nl": ("een half", "een derde", "twee derde", "een kwart", "drie kwart"),
    "sv": ("en halv", "en tredjedel", "två tredjedelar", "en fjärdedel", "tre fjärdedelar"),
    "pl": ("pół", "jedna trzecia", "dwie trzecie", "jedna czwarta", "trzy czwarte"),
    "ru": ("половина", "одна треть", "две трети", "одна четверть", "три четверти"),
    "tr": ("yarım", "üçte bir", "üçte iki", "dörtte bir", "dörtte üç"),
}
_FRACTION_OF = {"1/2": 0, "1/3": 1, "2/3": 2, "1/4": 3, "3/4": 4}
_SIMPLE_FRACTION = re.compile(r"(?<![\d/.,])([123]/[234])(?![\d/]|[.,]\d)")
# A whole number and a fraction ("3 1/2", "3½"): drei und ein viertel, trois et demi, not trois un demi.
_MIXED_FRACTION = re.compile(r"(?<![\d/.,])(\d{1,6}) ([123]/[234])(?![\d/]|[.,]\d)")
_MIXED_AND = {
    "de": "und",
    "fr": "et",
    "es": "y",
    "it": "e",
    "pt": "e",
    "nl": "en",
    "sv": "och",
    "pl": "i",
    "ru": "и",
    "tr": "ve",
}
# A half after a whole number: German joins it (dreieinhalb), French and Spanish drop the article.
_MIXED_HALF = {
    "de": "einhalb",
    "fr": "et demi",
    "es": "y medio",
    "it": "e mezzo",
    "pt": "e meio",
    "tr": "buçuk",  # bir buçuk
    "pl": "i pół",
    "ru": "с половиной",
}
# "3 x 4", "2 x täglich": the multiplication sign as a word.
_TIMES_WORDS = {"de": "mal", "fr": "fois", "es": "por", "it": "per", "pt": "vezes", "nl": "keer", "sv": "gånger"}
_TIMES = re.compile(r"(?<=\d)\s?[x\u00d7](?=\s?\d|\s+[^\W\d_])")
# A telephone number after the word that says so (Tel. 912 345 678), read digit by digit in its
# groups: spaced groups of three are otherwise thousands. French numbers in pairs: 01 23 45 67 89.
_PHONE_CUES = (
    r"tel\.?|telefon|telefono|teléfono|telefone|téléphone|tél\.?|telefoon|tfn\.?|móvil|celular|cellulare|"
    r"handy|mobil|portable|mobile|gsm|телефон|телефону|тел|моб|мобильный|сотовый"
)
_CUED_PHONE = re.compile(rf"\b((?:{_PHONE_CUES})\.?:?\s+)(\+?\d[\d ./-]{{5,}}\d)(?![\d])", re.IGNORECASE)
_FRENCH_PHONE = re.compile(r"(?<![\d.,])0([1-9])((?:[ .]\d\d){4})(?![\d.,]?\d)")
# A Russian or Ukrainian number dialled at home: 8 912 345-67-89, 8 (912) 345-67-89 (it had been
# "восемь миллионов девятьсот двенадцать тысяч ...").
_DOMESTIC_PHONE = re.compile(r"(?<![\d.,+])8[ -]?(?:\(\d{3,5}\)|\d{3,5})[ -]?\d{1,3}[ -]\d{2}[ -]\d{2}(?![\d.,]?\d)")
# German, Dutch and Swedish years read in hundreds after a verb of the life of a person or a thing
# ("Er kam 1998 nach Berlin"), or before one ("1998 geboren").
_YEAR_PARTICIPLES = {
    "de": "geboren|gestorben|gegründet|erbaut|eröffnet",
    "nl": "geboren|overleden|opgericht|gebouwd|geopend",
    "sv": "född|död|grundad|grundades|byggd|byggdes|öppnad|öppnades",
    "no": "født|grunnlagt|bygget|bygd|åpnet|vedtatt",
    "da": "født|grundlagt|bygget|åbnet|vedtaget",
}
_YEAR_VERBS = {
    # After the year, a verb in the singular: "1999 war ein gutes Jahr" (a count takes the plural, "1999 waren es").
    "de": (
        f"kam|starb|begann|endete|erschien|heiratete|zog|{_YEAR_PARTICIPLES['de']}",
        f"{_YEAR_PARTICIPLES['de']}|war|wurde|brachte|markierte|galt",
    ),
    "nl": (
        f"kwam|stierf|begon|eindigde|verscheen|trouwde|verhuisde|{_YEAR_PARTICIPLES['nl']}",
        _YEAR_PARTICIPLES["nl"],
    ),
    "sv": (f"kom|dog|föddes|började|slutade|gifte|{_YEAR_PARTICIPLES['sv']}", _YEAR_PARTICIPLES["sv"]),
    "no": (_YEAR_PARTICIPLES["no"], _YEAR_PARTICIPLES["no"]),  # "døde 1400 i trafikken": a count
    "da": (_YEAR_PARTICIPLES["da"], _YEAR_PARTICIPLES["da"]),
}


def _mixed_fraction(match: re.Match, language: str) -> str:
    whole, fraction = int(match.group(1)), match.group(2)
    if fraction == "1/2" and language in _MIXED_HALF:
        if language == "de":  # eineinhalb, dreieinhalb
            return ("ein" if whole == 1 else _words(whole, language)) + _MIXED_HALF["de"]
        return f"{_words(whole, language)} {_MIXED_HALF[language]}"
    return f"{_words(whole, language)} {_MIXED_AND[language]} {_FRACTION_WORDS[language][_FRACTION_OF[fraction]]}"


def _codes(text: str, language: str) -> str:
    """Numbers that name, not count: one led by 0 (030-1234567, 007) and a hyphened code's long groups."""
    text = _ZERO_LED.sub(lambda m: _digit_groups(m.group(0), language), text)
    return _HYPHEN_CODE.sub(lambda m: _long_groups_spelt(m.group(0), language) if _a_code(m, 4) else m.group(0), text)


def _long_groups_spelt(code: str, language: str) -> str:
    """ISBN 978-3-16-148410-0: a code's long group digit by digit (it had been a hundred and forty eight
    thousand ...); its short ones are left to be said as numbers, as these languages say a code's pairs."""
    # Set apart by commas: a hyphen left between two short groups read as a range ("drei bis sechzehn").
    return ", ".join(
        _digit_groups(group, language) if len(group) > 3 or group.startswith("0") else group
        for group in code.split("-")
    )


def _digit_groups(text: str, language: str) -> str:
    """Each group of digits digit by digit, the groups set apart: 030 123: null drei null, eins zwei drei."""
    return ", ".join(" ".join(_words(int(d), language) for d in group) for group in re.findall(r"\d+", text))


def _french_phone(match: re.Match) -> str:
    pairs = [f"0{match.group(1)}", *re.findall(r"\d\d", match.group(2))]
    return ", ".join(
        ("zéro " + _words(int(pair), "fr")) if pair[0] == "0" else _words(int(pair), "fr") for pair in pairs
    )


def _signs_and_decades(text: str, language: str) -> str:
    phone = _CUED_PHONE.search(text)
    if phone is not None:
        text = _CUED_PHONE.sub(
            lambda m: (
                m.group(1)
                + (
                    _FRENCH_PHONE.sub(_french_phone, m.group(2))
                    if language == "fr"
                    else _digit_groups(m.group(2), language)
                )
            ),
            text,
        )
    if language == "fr":
        text = _FRENCH_PHONE.sub(_french_phone, text)
    if language in ("ru", "uk"):
        text = _DOMESTIC_PHONE.sub(lambda m: _digit_groups(m.group(0), language), text)
    if language in _COMPARISON_WORDS:
        text = _comparisons(text, language)
    if language in _FRACTION_WORDS:
        text = _MIXED_FRACTION.sub(lambda m: _mixed_fraction(m, language), text)
        text = _SIMPLE_FRACTION.sub(lambda m: _FRACTION_WORDS[language][_FRACTION_OF[m.group(1)]], text)
    if language in _TIMES_WORDS:
        text = _TIMES.sub(f" {_TIMES_WORDS[language]}", text)
    if language in _PLUS_WORDS:
        plus = _PLUS_WORDS[language]
        text = _INTERNATIONAL_PHONE.sub(lambda m: f"{plus} {_digit_groups(m.group(0), language)}", text)
        text = _PLUS.sub(f"{plus} ", text)
    text = _NO_CENTS.sub("", text)
    if language == "de":
        text = _GERMAN_SCORE.sub(r"\1 zu \2", text)
        text = _GERMAN_ONE.sub(lambda m: _GERMAN_ONES[m.group(1).lower()], text)
    if language in _DECADES:
        ending = "er" if language == "de" else "talet"

        def decade(match: re.Match) -> str:
            number = match.group(1)
            said = (
                _year_in_hundreds(number, language)
                if len(number) == 4 and number < "2000"
                else _words(int(number), language)
            )
            return said + ending

        text = _DECADES[language].sub(decade, text)
    return text


def _dates_with_month_names(text: str, language: str) -> str:
    if language == "ru":
        text = _RUSSIAN_YEAR_ABBREVIATION.sub(r"\1 года", text)
        return _DAY_BEFORE_MONTH["ru"].sub(r"\1-го ", text)
    if language == "pl":
        text = _POLISH_YEAR.sub(
            lambda m: f"{'w ' if m.group(1) else ''}{_polish_ordinal(int(m.group(2)), bool(m.group(1)))} roku", text
        )
        return _DAY_BEFORE_MONTH["pl"].sub(lambda m: _polish_ordinal(int(m.group(1)), False) + " ", text)
    if language == "sv":
        return _DAY_BEFORE_MONTH["sv"].sub(lambda m: _words(int(m.group(1)), "sv", to="ordinal") + " ", text)
    return text


def _dates_in_digits(text: str, language: str) -> str:
    text = _ISO_DATE.sub(lambda m: _named_date(m.group(3), m.group(2), m.group(1), language, m.group(0)), text)
    text = _DAY_FIRST_DATE.sub(lambda m: _named_date(m.group(1), m.group(3), m.group(4), language, m.group(0)), text)
    if language == "de":
        # The last full stop of a date that ends the text ends its sentence too ("Er kommt am 7.7.").
        text = _GERMAN_DAY_MONTH.sub(lambda m: _german_day_month(m, text), text)
    return text


def _german_day_month(match: re.Match, text: str) -> str:
    said = _named_date(match.group(1), match.group(2), None, "de", match.group(0))
    if said == match.group(0):  # no date ("12.30."): as it was, its full stop once
        return said
    # The last full stop of a date that ends the text ends its sentence too ("Er kommt am 7.7.").
    return said + ("." if not text[match.end() :].strip() else "")


def _german_ordinals(text: str) -> str:
    """German days and ordinals: after a preposition or article, a word declined as one, and the second
    of a pair ("am 3. Mai", "jeder 5. Deutsche", "die 1. und 2. Klasse")."""
    text = _GERMAN_FIRST_DAY.sub(_german_first_day, text)
    text = _GERMAN_DATE.sub(_german_date, text)
    text = _GERMAN_ORDINAL.sub(_german_ordinal, _GERMAN_ORDINAL_STRONG.sub(_german_ordinal, text))
    text = _GERMAN_SECOND_ORDINAL.sub(
        lambda m: (
            f"{m.group(1)}{m.group(2)}{m.group(3)}"
            f"{_words(int(m.group(4).replace('.', '')), 'de', to='ordinal')}{m.group(2)} "
        ),
        text,
    )
    text = _GERMAN_SECOND_DAY.sub(r"\1n", text)
    return text


def _german_first_day(match: re.Match) -> str:
    before = match.group(1)
    if before and re.fullmatch(f"{_DETERMINER_E}|{_DETERMINER_EN}|{_DETERMINER_BARE}", before, re.IGNORECASE):
        return match.group(0)  # the article's rule gives the ending
    return f"{before + ' ' if before else ''}{_words(int(match.group(2)), 'de', to='ordinal')}n "


def _german_ordinal(match: re.Match) -> str:
    if match.group(1) is None:  # at the text's end: "am fünften.", "ist der zwölfte.", "seit dem dritten."
        ending = "" if match.group(4).lower().endswith("der") else "n"
        return f"{match.group(4)} {_words(int(match.group(5).replace('.', '')), 'de', to='ordinal')}{ending}."
    before = match.group(1)
    if re.fullmatch(_DETERMINER_E, before, re.IGNORECASE):
        ending = ""  # num2words' ordinal ends in -e: "zweite"
    elif re.fullmatch(_DETERMINER_EN, before, re.IGNORECASE):
        ending = "n"
    else:
        ending = "s" if german_neuter(match.group(3).lower()) else "r"
    # Before a word that starts sentences, its full stop is the sentence's too: "am fünften. dann".
    stop = "." if _NOT_COUNTED_WORD.fullmatch(match.group(3)) else ""
    return f"{before} {_words(int(match.group(2).replace('.', '')), 'de', to='ordinal')}{ending}{stop} "


def _german_date(match: re.Match) -> str:
    before, weekday, day = match.group(1), match.group(2) or "", int(match.group(3))
    if (
        before
        and before.lower() == "bis"
        and re.search(rf"\b(?:{_DETERMINER_E}|{_DETERMINER_EN})\s+\d{{1,2}}\.\s*$", match.string[: match.start()], re.I)
    ):
        return match.group(0)  # a span's second day, "der 1. bis 3. Mai": it takes the first's ending
    ordinal = _words(day, "de", to="ordinal") + ("n" if before else "")
    return f"{before} {weekday}{ordinal} " if before else f"{ordinal} "


# Russian writes an ordinal as its number and the end of the word it stands for ("5-го мая": пятого
# мая, "в 90-х": в девяностых), and a year as an ordinal before "год" in its case ("в 2020 году": в
# две тысячи двадцатом году). Only the last word of the ordinal declines; "третий" takes soft endings.
_RUSSIAN_ORDINAL = re.compile(
    "\\b(\\d+)-(\u0439|\u0433\u043e|\u043c\u0443|\u043c\u0438|\u043c|\u0435|\u044f|\u044e|\u0445)\\b"
)
_RUSSIAN_YEAR = re.compile(
    "\\b(\\d{3,4})(\\s+)(\u0433\u043e\u0434\u0430|\u0433\u043e\u0434\u0443|\u0433\u043e\u0434)\\b"
)
_RUSSIAN_YEAR_CASES = {
    "\u0433\u043e\u0434\u0430": "\u0433\u043e",
    "\u0433\u043e\u0434\u0443": "\u043c",
    "\u0433\u043e\u0434": "\u0439",
}
# The written end -> (the ending on a hard stem: пят-ого, втор-ого; on третий's soft one: треть-его).
_RUSSIAN_ENDINGS = {
    "\u0439": ("", ""),
    "\u0433\u043e": ("\u043e\u0433\u043e", "\u044c\u0435\u0433\u043e"),  # ого, ьего
    "\u043c\u0443": ("\u043e\u043c\u0443", "\u044c\u0435\u043c\u0443"),  # ому, ьему
    "\u043c": ("\u043e\u043c", "\u044c\u0435\u043c"),  # ом, ьем
    "\u043c\u0438": ("\u044b\u043c\u0438", "\u044c\u0438\u043c\u0438"),  # ыми, ьими
    "\u0435": ("\u043e\u0435", "\u044c\u0435"),  # ое, ье
    "\u044f": ("\u0430\u044f", "\u044c\u044f"),  # ая, ья
    "\u044e": ("\u0443\u044e", "\u044c\u044e"),  # ую, ью
    "\u0445": ("\u044b\u0445", "\u044c\u0438\u0445"),  # ых, ьих
}


def _russian_ordinal(number: int, written: str) -> str:
    said = _words(number, "ru", to="ordinal")
    hard, soft = _RUSSIAN_ENDINGS[written]
    if not hard:  # -й: the masculine nominative num2words gives
        return said
    if said.endswith("\u0442\u0440\u0435\u0442\u0438\u0439"):  # третий
        return said[:-2] + soft
    return said[:-2] + hard


_SPACE = "[ \u00a0\u202f]"  # a space, a no-break space or a narrow one (French typography) between groups
_COMMA_NUMBER = re.compile(rf"\d{{1,3}}(?:(?:\.\d{{3}})+|(?:{_SPACE}\d{{3}})+)(?:,\d+)?(?!\d)|\d+(?:[.,]\d+)*")


# A number only English writing makes, in a text of a decimal-comma language: thousands by commas
# and a decimal point (1,500.50), or commas between more than two groups of three (1,000,000). Read
# as the comma language writes it, it had been "ein dollar, fünfhundert komma fünf".
_ENGLISH_WRITTEN = re.compile(r"(?<![\d.,])\d{1,3}(?:(?:,\d{3})+\.\d+|(?:,\d{3}){2,})(?![\d,]|\.\d)")


def _as_comma_written(match: re.Match) -> str:
    return match.group(0).replace(",", "\0").replace(".", ",").replace("\0", ".")


def _plain_comma(match: re.Match, language: str) -> str:
    """`_plain` for a language that writes a decimal comma: 1.999 is a thousand and more, 3,5 three and a half."""
    text = re.sub(_SPACE, "", match.group(0))
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d+(?:,\d+)?", text):
        value = text.replace(".", "").replace(",", ".")
        if (
            language in _COMMA_WORDS
            and "." in value
            and len(value) - value.index(".") - 1 <= _COMMA_GROUPED_UP_TO.get(language, 99)
        ):
            return _decimal_parts(value, language, *_COMMA_WORDS[language])
        return _number(value, language)
    if re.fullmatch(r"\d+\.\d+", text):  # 3.5, written as English does
        return _number(text, language)
    return " ".join(_words(int(part), language) for part in re.split(r"[.,]", text) if part)


# An equation: its dash is minus, not a range ("5 - 3 = 2" had been "five to three two"), its
# slash divides, and "=" is said; the result is read by the passes after. "$-5": minus five dollars.
_OPERAND = r"\d[\d,]*(?:\.\d+)?"
_EQUATION = re.compile(
    rf"(?<![\w.,/-])({_OPERAND}(?:\s?[-+\u2212\u00d7*/\u00f7]\s?[-\u2212]?{_OPERAND})+)\s?=\s?(?=[-\u2212]?\d)"
)
_OPERATOR = re.compile(r"\s?([-+\u2212\u00d7*/\u00f7])\s?")
# A sum asked for ("what is 7 - 3?", "calculate 100 - 25"): its spaced dash is minus, not a range, and
# its spaced slash divides, as in an equation ("what is 2024-03-15", "what is 3/4" are a date, a fraction).
_ASKED_SUM = re.compile(
    r"(\b(?:what is|what's|whats|compute|calculate|evaluate|solve)\s+)"
    rf"({_OPERAND}(?:(?:\s[-\u2212/]\s|\s?[+\u00d7*\u00f7]\s?|\s(?:plus|times)\s)[-\u2212]?{_OPERAND})+)"
    r"(?=\s*(?:[?!]|\.(?!\d)|$))"  # the question's end: "work out 3 - 4 times a week" is a range
)
_OPERATOR_WORDS = {"-": "minus", "\u2212": "minus", "+": "plus", "\u00d7": "times", "*": "times", "/": "divided by"}
# x = 5, and x=5 of one letter (a URL's ?id=5 is left to its reading): said, not left out
_EQUALS = re.compile(r"(?<=[^\W_])\s=\s(?=[-\u2212]?[^\W_])|(?<=[^\W\d_])(?<![\w?&=/.#][^\W\d_])=(?=[-\u2212]?\d)")
_SIGN_AFTER_MONEY = re.compile(r"(?<![\w.,])([$£€¥₹])([-\u2212+])(?=\d)")
# A comma no thousands separator can be: 1,5 and 3,14159 written with a decimal comma (one point
# five, not "one five"); 1,23,456 grouped in lakhs (Indian English): one number, its commas dropped.
_DECIMAL_COMMA_EN = re.compile(
    r"(?<![\d,.])(\d{1,3}),(\d{1,2}|\d{4,})(?!\d|[.,]\d)|(?<![\d,.])(\d+),(\d{1,2})(?!\d|[.,]\d)"
)
_LAKHS = re.compile(r"(?<![\d,.])\d{1,2}(?:,\d\d)+,\d{3}(?:\.\d+)?(?!\d|[.,]\d)")


def _equation(match: re.Match, group: int = 1) -> str:
    said = _OPERATOR.sub(lambda m: f" {_OPERATOR_WORDS.get(m.group(1), 'divided by')} ", match.group(group))
    return " ".join(said.split()) + " equals "  # 3 - -2: one space between its two minuses


# An unknown is x, y, z or n; in an equation (an "=" in the text), a to d too: "a" is a word, and a
# dash after "Chapter 3" or "Vitamin C" is no minus.
_UNKNOWN = r"(?<![\w.])[nx-z](?![\w./-])"  # x-men, n/a: words
_VARIABLE = r"(?<![\w.])[a-dnx-z](?![\w./-])"


_COMPARED = {">": "greater than", "<": "less than", ">=": "greater than or equal to", "<=": "less than or equal to"}
_COMPARED.update({"\u2265": _COMPARED[">="], "\u2264": _COMPARED["<="]})


def _compared(match: re.Match) -> str:
    """ "x greater than 0", as maths is read ("for all x > 0", "let n > 1 be"; "is" would be one too many)."""
    return f"{match.group(2) or ''} {_COMPARED[match.group(1) or match.group(3)]} "


# y in "y = 2 + 3x": a letter beside a sign, a variable ("a" before a word is the article: "with a cache")
_LONE_VARIABLE = re.compile(r"(?<![\w.])[a-dnx-z](?=\s?[-+=*/^<>)\u2212])|(?<=[-+=*/(<>\u2212])\s?[a-dnx-z](?![\w.])")


def _power_minus(match: re.Match) -> str:
    """A dash after a power: minus, unless the same unit's power follows a number after it (a range)."""
    letter = match.group(2) or match.group(3)
    after = re.match(r"\s*[$\d.,]+.{0,12}?(?<![a-z])([a-z])\^([-\u2212]?\d{1,3})", match.string[match.end() :])
    if letter and letter not in "abcdnxyz" and after and after.groups() == (letter, match.group(4)):
        return match.group(0)
    return f"{match.group(1)} minus "


def _operators(variable: str, coefficient: str, after: str, last_term: bool = False) -> tuple:
    """The passes of `_OPERATORS` with `variable` for one letter, `coefficient` for what may follow
    2x ("2x + 1": two x; "2x - 4x", "2x faster": times) and `after` for what follows a letter after a
    number's minus ("3 - x + 1"; "Part 2 - x marks the spot" is a title's dash)."""
    return (
        (re.compile(r"(?<=[\w)\]])\s?==\s?(?=[\w(\[-])"), " equals "),
        (re.compile(r"(?<=[\w)\]])\s?!=\s?(?=[\w(\[-])"), " is not equal to "),
        (re.compile(r"(?<=\w)\s&&\s(?=\w)"), " and "),
        (re.compile(r"(?<=\w)\s\|\|\s(?=\w)"), " or "),
        (re.compile(r"\b([fgh])\(([a-z])\)"), r"\1 of \2"),
        (
            re.compile(rf"(?<![\w.^])(\d+)([nx-z])(?=\s?{coefficient})"),  # not x^3z's power
            lambda m: f"{_words(int(m.group(1)), 'en')} {m.group(2)}",
        ),
        # x^2 - 1, 6x^2y - 1: minus after a power (it had been a range, "x squared to one"); not between
        # two of a unit ("10 m^2 - 20 m^2", "9.8 m/s^2 - 10 m/s^2"), nor after a number's ("10^3 - 10^2"): ranges
        (
            re.compile(
                r"((?:(?<![\w.^])(?:\d+)?([a-z])|(?<=[\s/])([a-z])|\))\^([-\u2212]?\d{1,3})[a-z]?)\s?[-\u2212]\s?(?=[\d(a-z])"
            ),
            _power_minus,
        ),
        (
            re.compile(rf"({variable})\s[-\u2212]\s(?=\d|{variable})|(?<=\d)\s[-\u2212]\s(?={variable}{after})"),
            lambda m: f"{m.group(1) or ''} minus ",
        ),
        (
            re.compile(rf"(?<=[^\W_])\s\+\s(?=[^\W_(])|({variable})\+(?=\d|{variable})"),
            lambda m: f"{m.group(1) or ''} plus ",
        ),
        # x^2y * 3: the letter after a power is a term too
        (re.compile(rf"(\d|{variable}|(?<=\^\d)[a-z](?!\w))\s\*\s(?=\d|{variable})"), r"\1 times "),
        # i++, C++, x += 1, a >= b, C# (a language, a note): "plus plus", "sharp", not left out
        (re.compile(r"(?<![\w+])([a-z])\+\+(?![\w+])"), r"\1 plus plus"),
        (
            re.compile(r"(?<=\w)\s?([-+*/])=\s?(?=[\w(-])"),
            lambda m: f" {_OPERATOR_WORDS[m.group(1)]} equals ",
        ),
        (
            # >= between words; > between letters, or a letter and a number ("x >= 3"; alone, ">= 3" is
            # "at least three"): "Settings > Privacy" is a menu's path
            re.compile(
                r"(?<=[^\W\d_])\s(>=|<=|\u2265|\u2264)\s(?=[^\W\d_])"
                r"|(?<![\w.])([a-z])\s([<>]=?|[\u2264\u2265])\s(?=\d|[a-z](?!\w))"
            ),
            _compared,
        ),
        (re.compile(r"(?<![\w#])([a-g])#(?![\w#])"), r"\1 sharp"),
    ) + (
        # An equation's last term, after the signs above are read: "y = 2 + 3x" (it had been "three times"),
        # and a minus before it ("y = 3 - 3x": it had been a range, "three to three times")
        (
            (
                re.compile(r"(?<=\d)\s[-\u2212]\s(?=\d+[a-dnx-z][.,;!?]?\s*$)"),
                lambda m: " minus " if _LONE_VARIABLE.search(m.string, 0, m.start()) else m.group(0),
            ),
            (
                re.compile(r"(?<![\w.^])(\d+)([a-dnx-z])(?=[.,;!?]?\s*$)"),
                # of an equation with a variable of its own ("zoom = 3x", "speedup = 10x": times)
                lambda m: (
                    f"{_words(int(m.group(1)), 'en')} {m.group(2)}"
                    if _LONE_VARIABLE.search(m.string, 0, m.start())
                    else m.group(0)
                ),
            ),
        )
        if last_term
        else ()
    )


# Code and algebra a chat assistant writes: a == b, a != c, x && y, f(x), 2x + 1, x * 2, x - 1 (they had
# been "equals equals", "!equals", "and and", "two times +", "asterisk").
_OPERATORS = _operators(_UNKNOWN, r"[+*/^)]", r"\s?[-+=*/)<>^\u2212]")
_EQUATION_OPERATORS = _operators(_VARIABLE, r"[-+=<>*/)\u2212^]", "", last_term=True)


def _english(text: str, month_first: bool = False) -> str:
    if any(c in text for c in "=+*&|(-\u2212<>#\u2264\u2265"):
        for pattern, said in _EQUATION_OPERATORS if "=" in text else _OPERATORS:
            text = pattern.sub(said, text)
        if "=" in text and not any(c.isdigit() for c in text):  # a = b + c: no number for the passes below
            text = _EQUALS.sub(" equals ", text)
    if not _ENGLISH_WORK.search(text):  # most sentences: 5 µs for this search, 150 µs for every pass
        return text
    if "=" in text:
        text = _EQUALS.sub(" equals ", _EQUATION.sub(_equation, text))
    text = _VERSION.sub(_version, text)
    text = _ASKED_SUM.sub(lambda m: m.group(1) + _equation(m, 2)[: -len(" equals ")], text)
    text = _SIGN_AFTER_MONEY.sub(r"\2\1", text)
    text = _METERS_BEFORE.sub(lambda m: f"{m.group(1)} meter", text)
    text = _MEASURE_OF.sub(r"\1 \2", text)
    text = _SECONDS_AFTER.sub(lambda m: f"{m.group(1)} second{'' if m.group(2) == '1' else 's'}", text)
    if "," in text:
        # 1999,2000 (four digits each side) is a list of years, not a decimal
        decimal = _DECIMAL_COMMA_EN.sub(lambda m: ".".join(filter(None, m.groups())), text)
        text = _LAKHS.sub(lambda m: m.group(0).replace(",", ""), decimal)

    def money(match: re.Match) -> str:
        one, many, cent, cents = _CURRENCY[match.group(1)]
        whole = int(match.group(2).replace(",", ""))
        part = int(match.group(3).ljust(2, "0")) if match.group(3) else 0
        cents_said = f"{_words(part, 'en')} {cent if part == 1 else cents}"
        if not whole and part:  # $0.99: ninety nine cents
            return cents_said
        many = one if _describes_noun(match) and not part else many
        return f"{_words(whole, 'en')} {one if whole == 1 else many}" + (f" and {cents_said}" if part else "")

    def scaled(match: re.Match) -> str:
        scale = (match.group(3) or _SCALES[match.group(4).lower()]).lower()
        one, many = _CURRENCY[match.group(1)][:2]
        return f"{_english_number(match.group(2).replace(',', ''))} {scale} {one if _describes_noun(match) else many}"

    text = _BARE_DECIMAL.sub(r"0.\1", text)  # $.50, .5 kg: the zero a reader says before the point
    text = _english_first(text, month_first)
    text = _SIGNED.sub(lambda m: "plus " if m.group(1) == "+" else "minus ", text)
    text = _LETTERS_BEFORE_MONEY.sub(" ", text)  # us$50: u s, then fifty dollars
    text = _FEET_AND_INCHES.sub(lambda m: f"{_words(int(m.group(1)), 'en')} foot {_words(int(m.group(2)), 'en')}", text)
    text = _INCHES.sub(_inches, text)
    text = _THE_YEAR.sub(lambda m: _words(int(m.group(1)), "en", to="year"), text)
    text = _DEGREE.sub(lambda m: _degrees(m, "en"), text)
    text = _CODED_MONEY.sub(lambda m: _CODES[m.group(2).lower()] + m.group(1), text)
    text = _MONEY_AFTER.sub(lambda m: m.group(2) + m.group(1), text)
    text = _SCALED_MONEY.sub(scaled, text)
    text = _MONEY.sub(money, text)
    text = _SCALED_COUNT.sub(lambda m: f"{_english_number(m.group(1))} {_SCALES[m.group(2).lower()]}", text)
    text = _FEET_INCHES.sub(lambda m: f"{_words(int(m.group(1)), 'en')} foot {_words(int(m.group(2)), 'en')}", text)
    text = _MARKED_MEASURE.sub(_marked_measure, text)
    text = _PENCE.sub(lambda m: f"{_english_number(m.group(1))} {'penny' if m.group(1) == '1' else 'pence'}", text)
    text = _CENTS.sub(_cents, text)
    text = _DATE.sub(_date, text)
    text = _SCIENTIFIC.sub(lambda m: f"{m.group(1)} × 10^{m.group(2).strip('+')}{m.group(3)}", text)
    text = _TIMES_TEN.sub(" times ", text)
    text = _POWER.sub(_power, _SQUARE_UNIT.sub(_square_unit, text) if "^" in text else text)
    text = _UNIT.sub(_unit, _UNIT_PER.sub(r"\1 per ", text))
    text = _PER_UNIT.sub(lambda m: f"per {_UNIT_NAMES[m.group(1).lower()]}", text)
    for symbol, said in _SYMBOLS:
        text = symbol.sub(said, text)
    text = _ORDINAL.sub(lambda m: _words(int(m.group(1).replace(",", "")), "en", to="ordinal"), text)
    text = _DECADE.sub(_decade, text)
    text = _ELIDED_YEAR.sub(lambda m: _pair(int(m.group(1))) if m.group(1) != "00" else "oh oh", text)
    text = _PERCENT.sub(lambda m: f"{_english_number(m.group(1))} percent", text)
    text = _YEAR.sub(_years, text)
    text = _YEAR_SPAN.sub(
        lambda m: f"{_words(int(m.group(1)), 'en', to='year')} to {_words(int(m.group(2)), 'en')}", text
    )
    text = _MERIDIEM.sub(
        lambda m: f" {m.group(1).lower()} m" + ("." if m.group(2) and m.group(3) is not None else ""), text
    )
    text = _CLOCK.sub(_clock, text)
    text = _FRACTION.sub(_fraction, text)
    text = _BARE_YEAR.sub(lambda m: _glued(m) + _words(int(m.group(1)), "en", to="year"), text)
    text = _MINUS.sub("minus ", text)
    text = _LEADING_ZERO.sub(lambda m: " ".join(_DIGIT_NAMES[int(d)] for d in m.group(0)), text)
    text = _GLUED_CODE.sub(lambda m: " " + _three_digits(int(m.group(1))), text)
    text = _LETTERS_AND_DIGITS.sub(" ", text)
    return _NUMBER.sub(lambda m: _plain(m, "en"), text)


# "5 > 3": a comparison between two numbers, as it is said (five is greater than three); a sign with no
# term before it is a bound (>50: more than fifty, `_COMPARISON_SIGNS`), and a letter's is `_compared`'s.
_BETWEEN_OPERANDS = re.compile(r"(?<=[\d)])\s+(>=|\u2265|<=|\u2264|>|<)\s+(?=[$£€¥₹\-\u2212]?[\d(])")
# "between 2020-2022", "between 5-10 people": between two numbers is "and", not "to".
_BETWEEN_RANGE = re.compile(  # not "between 3-1 and 4-0", two scores
    r"\b(between\s+[$£€¥₹]?\d[\d,.]*%?)\s?[-\u2013]\s?(?=[$£€¥₹-]?\d[\d,.]*%?(?!\s+and\b))", re.IGNORECASE
)
# "1h 30m", "2 h 15 min": a duration in hours and minutes (it had been "one h thirty m").
_HOURS_AND_MINUTES = re.compile(r"(?<![\w.:])(\d{1,3})\s?h(?:rs?)?\s?(\d{1,2})\s?m(?:ins?)?(?![\w'])", re.IGNORECASE)


def _between_operands(match: re.Match) -> str:
    asked = re.search(r"\b(?:is|are)\s+\S+$", match.string[: match.start()], re.IGNORECASE)  # "Is 10 < 20?"
    return f" {'' if asked else 'is '}{_COMPARED[match.group(1)]} "


def _hours_and_minutes(match: re.Match) -> str:
    hours, minutes = int(match.group(1)), int(match.group(2))
    return f"{_words(hours, 'en')} hour{'s' * (hours != 1)} {_words(minutes, 'en')} minute{'s' * (minutes != 1)}"


def _english_first(text: str, month_first: bool) -> str:
    """What must be read before a dash can be a range: addresses, telephone numbers, dates, times."""
    if "&" in text:  # read, not left out as a symbol the run never saw
        text = _AMPERSAND.sub(" and ", text)
    for pattern, said in _SYMBOLS[1:4]:  # No. 1.2.3, § 1.5.2026: read before the dotted numbers' words hide them
        text = pattern.sub(said, text)
    text = _ADDRESS.sub(_address, text)
    text = _PHONE.sub(_phone, text)
    text = _SERIES_THEN_WORD.sub(_series_then_word, text)
    text = _SPACED_THOUSANDS.sub(lambda m: re.sub(r"\D", "", m.group(0)), text)
    text = _DURATION.sub(_duration, text)
    # 2020-07-04: written in the reader's own order first, then read as one
    text = _ISO_DATE.sub(lambda m: "/".join(m.group(*((2, 3, 1) if month_first else (3, 2, 1)))), text)
    text = _DATE_SPAN.sub(
        lambda m: f"{m.group(1)} {'and' if _BETWEEN_BEFORE.search(text, 0, m.start()) else 'to'} ", text
    )
    text = _DOTTED_DATE.sub(lambda m: _unless_versioned(m, lambda: _numeric_date(m, month_first=False)), text)
    text = _DASHED_DATE.sub(lambda m: _unless_versioned(m, lambda: _numeric_date(m, month_first)), text)
    text = _HYPHEN_CODE.sub(_hyphen_code, text)
    text = _NUMERIC_DATE.sub(lambda m: _numeric_date(m, month_first), text)
    text = _DAY_AND_MONTH.sub(lambda m: _day_and_month(m, month_first), text)
    text = _DAY_RANGE_BEFORE_MONTH.sub(
        lambda m: (
            f"{_the(m)}{_words(int(m.group(1)), 'en', to='ordinal')} to the {_words(int(m.group(2)), 'en', to='ordinal')} of "
        ),
        text,
    )
    text = _ERA_AFTER.sub(lambda m: f"{_words(int(m.group(1)), 'en', to='year')} {_era(m)}", text)
    text = _ERA_BEFORE.sub(lambda m: f"{_era(m, 1)} {_words(int(m.group(2)), 'en', to='year')}", text)
    text = _ROUND_PLURAL.sub(lambda m: _ROUND_PLURALS[m.group(1).replace(",", "")], text)
    text = _MONEY_RANGE.sub(r"\2 to \1", text)
    text = _SCALED_MONEY_RANGE.sub(r"\1\2 to \1", text)
    text = _MONTH_SHORT.sub(lambda m: _MONTH_OF[m.group(1).lower()[:3]] + " ", text)
    text = _DOTTED_CLOCK.sub(r"\1:\2", text)
    text = _DOTTED_CLOCK_SPAN.sub(r"\1 \2:\3 \4 \5:\6", text)
    text = _DOTTED_CLOCK_AFTER.sub(r"\1 \2:\3", text)
    text = _DOTTED_NUMBERS.sub(lambda m: _glued(m) + _dotted_number(m), text)
    text = _DAY_MONTH_SHORT.sub(lambda m: f"{m.group(1)} {_MONTH_OF[m.group(2).lower()[:3]]}", text)
    text = _named_numbers(_EMERGENCY.sub("nine one one", text))
    text = _AIRCRAFT.sub(_aircraft, text)
    text = _VIDEO_LINES.sub(
        lambda m: f"{_words(int(m.group(1)) // 100, 'en')} {_pair(int(m.group(1)) % 100)} {m.group(2).lower()}", text
    )
    text = _RATING.sub(
        lambda m: f"{_english_number(m.group(1) or m.group(3))} out of {_words(int(m.group(2) or m.group(4)), 'en')}",
        text,
    )
    text = _ARTICLE_FRACTION.sub("", text)
    text = _OUT_OF_TEN.sub(lambda m: f"{_words(int(m.group(1)), 'en')} out of ten", text)
    text = _RATIO.sub(r"\1 to \2", text)
    for saying, said in _SAYINGS.items():
        text = text.replace(saying, said)
    text = _PER.sub(r"\1 per ", _comparisons(_BETWEEN_OPERANDS.sub(_between_operands, text), "en"))
    text = _OVER.sub(_over, text)
    text = _MERIDIEM_RANGE.sub(r"\1 to ", text)
    text = _DAY_RANGE.sub(
        lambda m: (
            f"{m.group(1)} {_words(int(m.group(2)), 'en', to='ordinal')} to {_words(int(m.group(3)), 'en', to='ordinal')}"
        ),
        text,
    )
    text = _WEEKDAY_RANGE.sub(lambda m: f"{_WEEKDAYS[m.group(1).lower()]} to {_WEEKDAYS[m.group(2).lower()]}", text)
    text = _HOURS_AND_MINUTES.sub(_hours_and_minutes, _BETWEEN_RANGE.sub(r"\1 and ", text))
    return _NUMBER_RANGE.sub(" to ", text)  # after the telephone numbers and dates, whose dashes are not ranges


def _english_number(value: str) -> str:
    """A number in English, its decimals read digit by digit as English says them: 2.0 is two point zero."""
    whole, _, fraction = value.partition(".")
    said = _words(int(whole), "en")
    return f"{said} point {' '.join(_words(int(d), 'en') for d in fraction)}" if fraction else said


def _years(match: re.Match) -> str:
    before, first, between, second = match.groups()
    said = f"{before} {_words(int(first), 'en', to='year')}"
    if second is None:
        return said
    between = " to " if between.strip() in ("-", "\u2013") else between
    return said + between + (_words(int(second), "en", to="year") if len(second) == 4 else _words(int(second), "en"))


_MONTH_NAMES = _MONTHS.split("|")


def _version(match: re.Match) -> str:
    named, named_space, program, space, major, minor, more = match.groups()
    # After a program's name, a version's words follow the list or its first ("3.10 or 3.11 should work")
    if program and not any(re.match(_AS_VERSION, match.string[end:]) for end in {match.end(), match.end(6)}):
        return match.group(0)
    name, space = (named, named_space) if named else (program, space)
    said, left = [], 0
    for item in re.finditer(r"(,?\s*(?:or|and|to|through)?\s*)(\d+)\.(\d+)", more):
        listed = item.group(2) == major or item.group(1).strip() != ","
        if not listed or _MEASURED_AFTER.match(match.string, match.start(7) + item.end()):
            break  # "Python 3.12, 45.50 MB", "3.10 or 11.50 MB": an amount, not a version
        said.append(item.group(1) + _version_number(item.group(2), item.group(3)))
        left = item.end()
    return f"{name}{space or ' '}{_version_number(major, minor)}{''.join(said)}{more[left:]}"


_MEASURED_AFTER = re.compile(
    rf"\s*(?:%|percent|dollars?|euros?|pounds?|times|x|{'|'.join(sorted(map(re.escape, _UNIT_NAMES), key=len, reverse=True))})"
    r"(?![^\W\d_])",
    re.IGNORECASE,
)


def _version_number(major: str, minor: str) -> str:
    # 22.04: oh four; 1.00: oh oh
    said = " ".join(_DIGIT_NAMES[int(d)] for d in minor) if minor.startswith("0") else _words(int(minor), "en")
    return f"{_words(int(major), 'en')} point {said}"


def _dotted_number(match: re.Match) -> str:
    parts = match.group(0).split(".")
    if len(parts[0]) <= 3 and not parts[0].startswith("0") and all(len(p) == 3 for p in parts[1:]):
        # 1.234.567, 1.000.000.000: grouped in thousands; an address writes no group over 255, nor 000 or 067
        address = len(parts) == 4 and all(int(p) <= 255 and not (len(p) > 1 and p.startswith("0")) for p in parts)
        if not address:
            return _words(int("".join(parts)), "en")
    if len(parts) == 4 and all(len(p) <= 3 and int(p) <= 255 for p in parts):
        return " dot ".join(" ".join(_DIGIT_NAMES[int(d)] for d in part) for part in parts)
    return " point ".join(_words(int(part), "en") for part in parts)


def _the(match: re.Match) -> str:
    """ "the " before a day read as "the fourth of July", unless the text says it already ("since the 4 July")."""
    return "" if re.search(r"\bthe\s+$", match.string[: match.start()], re.IGNORECASE) else "the "


def _unless_versioned(match: re.Match, read: Callable[[], str]) -> str:
    return match.group(0) if _VERSIONED.search(match.string, 0, match.start()) else read()


_SIGN_BEFORE_CODE = re.compile(r"(?:[§#$€£¥₹]|\bnos?\.?)\s*$", re.IGNORECASE)


def _a_code(match: re.Match, long: int = 5) -> bool:
    """Three hyphened numbers that name (one of `long` digits or more, or led by 0), not after a sign
    that reads them (English counts 5000-6000-7000; other languages' codes are read from 4 digits)."""
    groups = match.group(0).split("-")
    # A round one (1000-2000-3000) is a count's: "eins null null null" had been said of it.
    grouped = all(len(group) >= 4 for group in groups) and not all(group.endswith("00") for group in groups)
    # An ISBN-13 (978-90-274-3964-2) is 13 digits from 978 or 979, however its groups fall.
    grouped = grouped or groups[0] in ("978", "979") and len("".join(groups)) == 13
    if not grouped and not any(  # 4111-1111-1111-1111: a card's groups, each said digit by digit
        (len(group) >= long and not group.endswith("00")) or (len(group) > 1 and group.startswith("0"))
        for group in groups
    ):
        return False
    return not _years_alone(match.group(0)) and not _SIGN_BEFORE_CODE.search(match.string, 0, match.start())


def _years_alone(code: str) -> bool:
    """1990-1995-2000, 1999-2000-01: a range's years, read as one."""
    years = [len(group) == 4 and 1000 <= int(group) <= 2099 for group in code.split("-")]
    return any(years) and all(year or len(group) == 2 for year, group in zip(years, code.split("-")))


def _hyphen_code(match: re.Match) -> str:
    if not _a_code(match):
        # A series (a countdown's 3-2-1, a 4-3-3 formation, 100-200-300) is said number by number; a
        # range has two ends ("three to two to one" had been said). Years (1990-1995-2000) and money
        # ($5-10-15) stay as read.
        if _years_alone(match.group(0)) or re.search(r"[$€£¥₹]\s*$", match.string[: match.start()]):
            return match.group(0)
        return ", ".join(match.group(0).split("-"))
    return ", ".join(
        " ".join(_DIGIT_NAMES[int(d)] for d in group)
        if len(group) > 2 or group.startswith("0")
        else _words(int(group), "en")
        for group in match.group(0).split("-")
    )


def _numeric_date(match: re.Match, month_first: bool) -> str:
    a, b, year = (int(g) for g in match.groups())
    if not (1 <= a <= 31 and 1 <= b <= 31) or (a > 12 and b > 12):
        return match.group(0)
    first = b > 12 or (a <= 12 and month_first)  # month first: said so ("2.2.2021" had been "february second")
    month, day = (a, b) if first else (b, a)
    written = match.group(3)
    said = _words(year, "en", to="year") if len(written) == 4 else _words(year, "en")
    if written.startswith("0"):  # 3/4/05: "oh five", as a year's last two digits are said (it had been "five")
        said = "oh " + said if year else "double oh"
    if first:
        return f"{_MONTH_NAMES[month - 1]} {_words(day, 'en', to='ordinal')}, {said}"
    return f"{_the(match)}{_words(day, 'en', to='ordinal')} of {_MONTH_NAMES[month - 1]}, {said}"


def _day_and_month(match: re.Match, month_first: bool) -> str:
    word, a, b = match.group(1), int(match.group(2)), int(match.group(3))
    if not (1 <= a <= 31 and 1 <= b <= 31) or (a > 12 and b > 12):
        return match.group(0)
    after, before = match.string[match.end() :], match.string[: match.end(1)] + " "
    by = word.lower() == "by"
    if a <= 12 and b <= 12 and ((by and _SHARE_AFTER.match(after)) or _CHANGED_BY.search(before)):
        return match.group(0)  # "by 1/10 each week", "dropped by 1/3": a share
    fraction = a < b and b in (2, 3, 4, 8, 16)
    if fraction and _PRICED_AFTER.match(after):
        return match.group(0)  # "Friday 1/2 price wings", "Tuesday 3/4 of voters", "Sat 1/2 marathon"
    if word.lower().startswith("expir") and (match.group(2).startswith("0") or re.search(r"\bcard\b", before[-40:])):
        return match.group(0)  # "Card expires 12/27", "expires 08/25": a card's month and year
    dating = re.fullmatch(_DATING_WORDS, word, re.IGNORECASE) is not None or word.lower().rstrip(",").endswith("day")
    if not dating and (fraction or (a, b) == (24, 7)):
        return match.group(0)  # "ends 1/4 mile past", "due 1/2 now": a fraction; "due 24/7"
    month, day = (a, b) if b > 12 or (a <= 12 and month_first) else (b, a)
    if (month, day) == (a, b):
        return f"{word} {_MONTH_NAMES[month - 1]} {_words(day, 'en', to='ordinal')}"
    return f"{word} the {_words(day, 'en', to='ordinal')} of {_MONTH_NAMES[month - 1]}"


def _era(match: re.Match, group: int = 2) -> str:
    """BC, B.C.E., A.D. as their letters are said; the full stop of one that ends the text ends it."""
    written = match.group(group)
    ends = written.endswith(".") and match.end(group) == len(match.string.rstrip())
    return " ".join(c for c in written.lower() if c.isalpha()) + ("." if ends else "")


def _duration(match: re.Match) -> str:
    parts = zip((int(match.group(i)) for i in (1, 2, 3)), ("hour", "minute", "second"))
    said = [f"{_words(n, 'en')} {unit}{'' if n == 1 else 's'}" for n, unit in parts if n]
    return " and ".join([", ".join(said[:-1]), said[-1]] if len(said) > 1 else said) or "zero seconds"


_MONTH_ALONE_BEFORE = re.compile(r"\b(?:in|during|since|until|by|last|this|next|every|of)\s+$", re.IGNORECASE)


def _date(match: re.Match) -> str:
    day, day_month, month, day_after, month_alone, before_year, year = match.groups()
    if month_alone and not year:
        return match.group(0)
    if day:
        said = f"{_the(match)}{_words(int(day), 'en', to='ordinal')} of {day_month}"
    elif month:
        # "we march 3 miles", "it may 2 times": the verbs, unless a suffix, a year or the sentence's end says a date
        after = match.string[match.end() :]
        verb = month.lower() in ("march", "may") and not year and match.group(0)[-1].isdigit()
        if verb and re.match(r"\s+[^\W\d_]", after):
            return match.group(0)
        # "in December 2 people died": a count after a month alone; "July 4 fireworks", "April 1 jokes": dates
        before = match.string[: match.start()]
        if not year and re.match(rf"\s+{COUNTED}\b", after) and (verb or _MONTH_ALONE_BEFORE.search(before)):
            return match.group(0)
        said = f"{month} {_words(int(day_after), 'en', to='ordinal')}"
    else:
        said = month_alone
    return said + (f"{before_year}{_words(int(year), 'en', to='year')}" if year else "")


def _unit(match: re.Match) -> str:
    number, unit = match.group(1).replace(",", ""), _UNIT_NAMES[(match.group(2) or match.group(3)).lower()]
    if "/" in number:  # 1/2 tsp: a half teaspoon; 1 1/2 tsp: one and a half teaspoons
        fraction = _FRACTION.fullmatch(number)
        said = _fraction(fraction) if fraction else number
        if said == number:
            return match.group(0)
        if " and " in said:
            return f"{said} {_plural_unit(unit)}"
        return f"half a {unit}" if said == "a half" else f"{said} of a {unit}"
    # After "a" the measure describes a noun, and English keeps it singular: a ten kilometer run.
    describes = _ARTICLE_BEFORE.search(match.string, 0, match.start()) is not None
    return f"{_english_number(number)} {unit if number == '1' or describes else _plural_unit(unit)}"


# Nouns an amount describes ("a $5 bill", "the $15 minimum wage"): English keeps its currency singular.
_MONEY_NOUN_AFTER = re.compile(
    r"\s+(?:(?:bank|gift|credit)\s+)?(?:bills?|notes?|coins?|cards?|fee|fine|tickets?|minimum\s+wage|bailout|deal|"
    r"budget|loan|check|cheque|voucher|bet|tip|discount|bonus|donation|item|plan|subscription|contract|pledge|"
    r"investment|purchase|refund|raise|increase|tax(?![-\s]free)|surcharge|price\s+tag|settlement|fund|package|program|"
    r"project|prize|jackpot|payment|deposit|order|salary|wage|grant|gift|stipend|allowance|reward|ransom|"
    r"rebate|credit|coupon|meal|lunch|dinner|bottle|phone|watch|bag|shirt|toy|charge|penalty|premium|bid|"
    r"offer|sale|stimulus|aid|tariff|levy|subsidy|stake|tab|limit|minimum|cap|upgrade|wager|reduction|hike|"
    r"overrun|shortfall|deficit|surplus)\b",
    re.IGNORECASE,
)


def _describes_noun(match: re.Match) -> bool:
    """Whether an amount of money describes the noun after it ("a $2B deal": a two billion dollar deal)."""
    return _MONEY_NOUN_AFTER.match(match.string, match.end()) is not None


def _plural_unit(unit: str) -> str:
    """The plural is of the unit's last word before "per": kilometers per hour, feet."""
    first, per, rest = unit.partition(" per ")
    *before, last = first.split()
    ending = next((e for e in _UNIT_PLURALS if last.endswith(e)), None)
    last = last[: -len(ending)] + _UNIT_PLURALS[ending] if ending else last + "s"
    return " ".join([*before, last]) + per + rest


def _decade(match: re.Match) -> str:
    said = _words(int(match.group(1)), "en", to="year") if match.group(1) else _words(int(match.group(2)), "en")
    return said[:-1] + "ies" if said.endswith("y") else said + "s"


def _clock(match: re.Match) -> str:
    hour, minutes = int(match.group(1)), int(match.group(2))
    if minutes == 0 and hour and re.match(r" [ap] m\b", match.string[match.end() :]):
        return _words(hour, "en")  # 9:00 AM: "nine a m", as it is said
    if minutes == 0:
        # "o clock": letters every English vocabulary holds (an older one may lack the apostrophe)
        return _words(hour, "en") + (" o clock" if hour <= 12 else " hundred")
    return f"{_words(hour, 'en')} {'oh ' if minutes < 10 else ''}{_words(minutes, 'en')}"


def _named_numbers(text: str) -> str:
    """The numbers `_DIALED` to `_TAX_FORM` find, said as they name."""
    digits = lambda number: " ".join(_DIGIT_NAMES[int(d)] for d in number)  # noqa: E731
    text = _DIALED.sub(lambda m: m.group(1) + digits(m.group(2)), text)
    text = _STATUS_CODE.sub(lambda m: _three_digits(int(next(code for code in m.groups() if code))), text)
    text = _ZIP_CODE.sub(
        lambda m: m.group(1) + digits(m.group(2)) + (f" {digits(m.group(3))}" if m.group(3) else ""), text
    )
    text = _NAMED_THREES.sub(lambda m: m.group(1) + m.group(2) + _three_digits(int(m.group(3))), text)
    text = _RETIREMENT_PLAN.sub(lambda m: f"{_three_digits(int(m.group(1)))} {m.group(2).lower()}", text)
    return _TAX_FORM.sub(lambda m: _words(int(m.group(1) or m.group(2)), "en", to="year"), text)


def _three_digits(number: int) -> str:
    """404: four oh four, 360: three sixty, 500: five hundred."""
    rest = number % 100
    return f"{_words(number // 100, 'en')} {_pair(rest) if rest else 'hundred'}"


def _aircraft(match: re.Match) -> str:
    if match.group(1):
        return f"{match.group(1)} {_pair(int(match.group(2)))}"
    rest = int(match.group(5))
    return f"{match.group(3)} three {_pair(rest) if rest else 'hundred'}"


def _glued(match: re.Match) -> str:
    """A space before words that replace digits written against a word (FY2024, Win2000)."""
    return " " if match.start() and match.string[match.start() - 1].isalpha() else ""


def _pair(number: int) -> str:
    """Two digits said as a pair, as in a model's name: 47 forty seven, 07 oh seven."""
    return ("oh " if number < 10 else "") + _words(number, "en")


def _marked_measure(match: re.Match) -> str:
    before = match.string[: match.start()]
    number, mark = match.group(1), match.group(2)
    opened = [m.end() for m in _OPENING_QUOTES[mark].finditer(before)] if mark in _OPENING_QUOTES else []
    if opened and mark not in before[opened[-1] :]:  # "top 10" list, 'Catch 22' is: the quote closes
        return match.group(0)
    one, many = ("foot", "feet") if mark in "'\u2032" else ("inch", "inches")
    # 6' tall, 12" of snow: a length; a 12" pizza, a 6' fence: it describes the noun, singular
    plural = number != "1" and _MEASURE_PLURAL_BEFORE.match(match.string, match.end()) is not None
    return f"{_english_number(number)} {many if plural else one}"


def _over(match: re.Match) -> str:
    """22/7, 4/3, 45/50: "twenty two over seven"; a fraction of one (3/4, 5/8) is left to `_fraction`.
    A whole number over one digit had kept its slash ("twenty two/seven")."""
    fraction = _FRACTION.fullmatch(match.group(0))
    if fraction and int(fraction.group(2)) < int(fraction.group(3)):
        return match.group(0)
    return f"{match.group(1)} over {match.group(2)}"


# Words after which a fraction takes no article of its own: a determiner ("the 1/4 mile": the quarter
# mile, not "the a quarter mile"), or a preposition before a measure that describes a noun ("into
# 1/2-inch pieces": half-inch pieces).
_DETERMINER_BEFORE = re.compile(r"\b(?:the|this|that|its|his|her|their|our|my|your|each|every|per)\s+$", re.IGNORECASE)
_OWN_ARTICLE = re.compile(
    r"\b(?:the|this|that|its|his|her|their|our|my|your|each|every|per|into|in|of|with|for|on|to|at|by|from)\s+$",
    re.IGNORECASE,
)


def _fraction(match: re.Match) -> str:
    whole, count, parts = match.group(1), int(match.group(2)), int(match.group(3))
    if count >= parts:  # 2/2, 4/3: not a fraction of one; read as written
        return match.group(0)
    ordinal = _words(parts, "en", to="ordinal")
    one, many = _FRACTION_NAMES.get(parts, (ordinal, ordinal + "s"))
    article = "an" if one[0] in "aeio" else "a"  # an eighth, an eleventh
    if count == 1 and parts == 2 and not whole and _ARTICLE_AFTER.match(match.string, match.end()):
        return "half"  # "1/2 a cup": half a cup (it had read "a half a cup")
    if count == 1 and not whole and _OWN_ARTICLE.search(match.string, 0, match.start()):
        article = ""  # "the 1/4 mile", "into 1/2-inch pieces": the quarter mile, half-inch pieces
        if (
            not _DETERMINER_BEFORE.search(match.string, 0, match.start())
            and match.string[match.end() : match.end() + 1] != "-"
        ):
            article = "an" if one[0] in "aeio" else "a"
    said = f"{article if count == 1 else _words(count, 'en')} {one if count == 1 else many}".lstrip()
    return f"{_words(int(whole), 'en')} and {said}" if whole else said


_NUM2WORDS_CODES = {"nb": "no", "kk": "kz"}  # espeak-ng's codes num2words names otherwise: Bokmål, Kazakh


def number_reader(language: Optional[str]) -> Optional[Callable[[str], str]]:
    """What reads the digits of a text in `language` (an espeak-ng code) as words, or None where
    num2words has no reader for it."""
    if language is None:
        return None
    primary = _NUM2WORDS_CODES.get(language.lower().split("-")[0], language.lower().split("-")[0])
    if primary == "en":
        month_first = language.lower() in ("en-us", "en-029")  # 12/25/2020: American English's order
        return lambda text: _english(text, month_first)
    from num2words import CONVERTER_CLASSES

    if primary not in CONVERTER_CLASSES:
        return None
    comma = primary in _DECIMAL_COMMA and language.lower() not in _DECIMAL_POINT_REGIONS
    pattern, plain = (_COMMA_NUMBER, _plain_comma) if comma else (_NUMBER, _plain)
    percent = _PERCENT_WORDS.get(primary)
    money = _money_pattern(primary, comma) if primary in _MONEY_WORDS else None
    pesos = language.lower() in _DECIMAL_POINT_REGIONS and primary == "es"
    clock = _time_pattern(primary)
    durations = _duration_pattern(primary)
    years = _year_pattern(primary) if primary in _YEAR_WORDS else None
    years_before = _year_before_pattern(primary) if primary in _YEAR_WORDS else None
    metric = _metric_pattern(primary, pattern)

    def read(text: str) -> str:
        if not _DIGIT.search(text):
            return text
        if comma:
            text = _ENGLISH_WRITTEN.sub(_as_comma_written, text)
        if primary in _MONTH_NAMES_OF:
            text = _dates_with_month_names(_dates_in_digits(text, primary), primary)
        text = _signs_and_decades(text, primary)
        if primary in _POWER_WORDS:
            text = _POWER.sub(lambda m: _power(m, primary), text)
        text = _codes(text, primary)
        if primary in _RANGE_TO:
            text = _RANGE.sub(rf"\1 {_RANGE_TO[primary]} ", text)
        if percent is not None:  # "3,5 %": the sign read after its number, as these languages say it
            text = _PERCENT_SIGN.sub(rf"\1 {percent}", text)
        elif primary == "ru":
            text = _RUSSIAN_PERCENT.sub(lambda m: f"{m.group(1)} {_russian_percent(m.group(1))}", text)
        elif primary == "tr":  # Turkish puts the sign first and says it first: %5 is "yüzde beş"
            text = _TURKISH_PERCENT.sub("y\u00fczde \\1", text)
        if primary in _DEGREE_AS_ORDINAL:  # "il 1° maggio": the ring as the ordinal's mark, primo
            text = _DEGREE_AS_ORDINAL[primary].sub("\\1\u00ba", text)
        if primary in _DEGREE_WORDS:
            text = _DEGREE.sub(lambda m: _degrees(m, primary), text)
        if money is not None:
            text = money.sub(lambda m: _money(m, primary, pesos), _currency_names(text, comma, pesos))
        if metric is not None:
            text = metric[0].sub(lambda m: _metric(m, primary, metric[1]), text)
        text = _dotted_times(text, primary) if comma else text
        if primary in _RANGE_TO:  # 9:00-18:00: neun uhr bis achtzehn uhr
            text = re.sub(r"(\d:\d\d)\s?[-\u2013]\s?(?=\d{1,2}:\d\d)", rf"\1 {_RANGE_TO[primary]} ", text)
        text = durations.sub(lambda m: _duration_of(m, primary, clock), text)
        text = clock.sub(lambda m: _time_of_day(m, primary), text)
        if primary in _HOUR_NOUNS:
            text = _H_TIME.sub(lambda m: _time_of_day(m, primary), text)
        if primary == "de":
            text = _german_ordinals(text)
        if years is not None and years_before is not None:
            text = years.sub(lambda m: _years_in_hundreds(m, primary), text)
            text = years_before.sub(lambda m: _year_in_hundreds(m.group(1), primary), text)
        elif primary == "ru":
            text = _RUSSIAN_YEAR.sub(
                lambda m: _russian_ordinal(int(m.group(1)), _RUSSIAN_YEAR_CASES[m.group(3)]) + m.group(2) + m.group(3),
                text,
            )
            text = _RUSSIAN_ORDINAL.sub(lambda m: _russian_ordinal(int(m.group(1)), m.group(2)), text)
        if primary in _ORDINALS:
            marked, endings = _ORDINALS[primary]
            text = marked.sub(lambda m: _ordinal(int(m.group(1)), primary, _ordinal_form(m, primary, endings)), text)
        if primary in _MINUS_WORDS:
            text = _MINUS.sub(f"{_MINUS_WORDS[primary]} ", text)
        text = _LETTERS_AND_DIGITS.sub(" ", text)
        text = pattern.sub(lambda m: _count(plain(m, primary), m, primary, whole), text)
        return _ITALIAN_ELIDED.sub("un'", text) if primary == "it" else text

    whole = _WHOLE_COMMA if comma else _WHOLE_POINT
    return regional(language, read)


# A whole number as each kind of language writes it; one before a noun takes the noun's gender (agreement.py).
_WHOLE_COMMA = re.compile(r"\d{1,3}(?:[. \u00a0\u202f]\d{3})+|\d+")
_WHOLE_POINT = re.compile(r"\d{1,3}(?:,\d{3})+|\d+")


_ITALIAN_ELIDED = re.compile(r"\bun' (?=[aeiouàèéìòù])")


def _count(said: str, match: re.Match, language: str, whole: re.Pattern) -> str:
    return agree(said, match.string, match.start(), match.end(), language) if whole.fullmatch(match.group(0)) else said
