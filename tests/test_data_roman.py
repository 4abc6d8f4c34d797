"""Roman numerals read as words for the characters front end, through the cleaners a run uses."""

from __future__ import annotations

import pytest

from xtts_cli.data.roman import roman_reader
from xtts_cli.data.text import clean_text, prepare_texts


def _read(text: str, language: str) -> str:
    cleaners = ["english_cleaners"] if language.startswith("en") else ["multilingual_cleaners"]
    return prepare_texts([text], cleaners, "characters", language, numbers="words")[0]


@pytest.mark.parametrize(
    ("language", "text", "read"),
    [
        ("en", "Chapter IV. The storm", "chapter four. the storm"),
        (
            "en",
            "World War II ended; World War I began in 1914.",
            "world war two ended; world war one began in nineteen fourteen.",
        ),
        ("en", "Henry VIII's wives", "henry the eighth's wives"),
        (
            "en",
            "Queen Elizabeth II met Pope John Paul II.",
            "queen elizabeth the second met pope john paul the second.",
        ),
        ("en", "Louis XIV, the Sun King, and James I.", "louis the fourteenth, the sun king, and james the first."),
        ("en", "Type II diabetes; Super Bowl LVII", "type two diabetes; super bowl fifty seven"),
        ("en", "Vol. III, Act V, Scene iii.", "volume three, act five, scene three."),
        ("en-us", "Charles V and Pius X", "charles the fifth and pius the tenth"),
        ("fr", "Louis XIV et François Ier", "louis quatorze et françois premier"),
        ("fr", "Au XIXe siècle, sous la Ve République", "au dix neuvième siècle, sous la cinquième république"),
        ("fr", "Chapitre III, Napoléon III", "chapitre trois, napoléon trois"),
        ("es", "Felipe II, Alfonso XIII e Isabel II", "felipe segundo, alfonso trece e isabel segunda"),
        ("es", "En el siglo XXI, capítulo IV", "en el siglo veintiuno, capítulo cuatro"),
        ("pt", "Dom Pedro II e Dona Maria II", "dom pedro segundo e dona maria segunda"),
        ("pt", "O século V e o século XXI", "o século quinto e o século vinte e um"),
        ("it", "Luigi XIV ed Elisabetta II", "luigi quattordicesimo ed elisabetta seconda"),
        ("it", "Il XXI secolo, il secolo XX", "il ventunesimo secolo, il secolo ventesimo"),
        ("nl", "Willem III en hoofdstuk IV", "willem de derde en hoofdstuk vier"),
        ("de", "Kapitel III und Teil II", "kapitel drei und teil zwei"),
        # German: the case a preposition asks for, and the ordinal's dot read with it where the sentence goes on.
        ("de", "Ludwig XIV. war König.", "ludwig der vierzehnte war könig."),
        (
            "de",
            "Unter Friedrich II. wuchs es, für Ludwig II. gebaut, mit Elisabeth II. gesprochen.",
            "unter friedrich dem zweiten wuchs es, für ludwig den zweiten gebaut, mit elisabeth der zweiten "
            "gesprochen.",
        ),
        ("de", "Es war Kaiser Wilhelm II.", "es war kaiser wilhelm der zweite."),
        ("ru", "Пётр I основал город, Екатерина II правила.", "пётр первый основал город, екатерина вторая правила."),
        (
            "ru",
            "XX век, в XIX веке, литература XVIII века",
            "двадцатый век, в девятнадцатом веке, литература восемнадцатого века",
        ),
        ("pl", "Jan III Sobieski i Elżbieta II", "jan trzeci sobieski i elżbieta druga"),
        ("pl", "XX wiek, w XIX wieku, z XVIII wieku", "dwudziesty wiek, w dziewiętnastym wieku, z osiemnastego wieku"),
        ("de", "Die Zeit Ludwigs XIV. war lang.", "die zeit ludwigs des vierzehnten war lang."),
        (
            "sv",
            "Karl XII och Gustav II Adolf, Elizabeth II, kapitel III",
            "karl den tolfte och gustav den andre adolf, elizabeth den andra, kapitel tre",
        ),
        # Turkish: the numeral before what it numbers, with the ordinal's dot.
        (
            "tr",
            "II. Mehmet, XIX. yüzyıl ve I. Dünya Savaşı",
            "ikinci mehmet, on dokuzuncu yüzyıl ve birinci dünya savaşı",
        ),
        # Russian and Polish headings: an ordinal in the heading's gender.
        ("ru", "Глава III, часть II, том IV", "глава третья, часть вторая, том четвёртый"),
        ("pl", "Rozdział III, część II", "rozdział trzeci, część druga"),
    ],
)
def test_a_numeral_after_a_heading_a_century_or_a_name_is_read(language: str, text: str, read: str) -> None:
    assert _read(text, language) == read


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # The pronoun, letters that name things, words that are numerals only in form.
        ("en", "In part I think so, and type I diabetes too"),
        ("en", "I saw a mix of vi and CD in Washington DC"),
        ("en", "Appendix C, Type D and Class L"),
        ("en", "Henry XIIII and Chapter IIX"),  # not written the Roman way
        ("fr", "Le siècle des lumières, ce siècle-ci"),  # not fifty and a hundred
        ("es", "Mi casa, mil veces"),
        ("it", "Di ci li vi"),
        # Polish "i" is "and": sex and age, Jan and Maria.
        ("pl", "Płeć i wiek, Jan i Maria, ta część ci się spodoba"),
        ("tr", "A. B. Yılmaz ve C. vitamini"),  # initials
    ],
)
def test_words_that_only_look_like_numerals_stay_words(language: str, text: str) -> None:
    cleaners = ["english_cleaners"] if language == "en" else ["multilingual_cleaners"]
    assert _read(text, language) == clean_text(text, cleaners)


def test_only_the_characters_front_end_with_numbers_as_words_reads_them() -> None:
    assert prepare_texts(["Chapter IV"], ["english_cleaners"], "characters", "en", numbers="characters") == [
        "chapter iv"
    ]
    assert roman_reader("fa") is None and roman_reader(None) is None


def test_the_phonemes_front_end_reads_them_as_words_too() -> None:
    # espeak-ng reads the lowered "henry viii" as "henry roman eight" and French "xiv" as letters.
    from xtts_cli.data.phonemes import phonemize

    assert prepare_texts(
        ["Henry VIII, World War II."], ["english_cleaners"], "phonemes", "en-us", "words"
    ) == phonemize(["henry the eighth, world war two."], "en-us")
    assert prepare_texts(["Louis XIV"], ["multilingual_cleaners"], "phonemes", "fr", "words") == phonemize(
        ["louis quatorze"], "fr"
    )
