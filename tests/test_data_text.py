"""Text cleaners and the character tokenizer."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xtts_cli.data.text import PAD_ID, Tokenizer, UnknownCharactersError, clean_text, prepare_texts
from xtts_cli.errors import XttsError

PERSIAN = "سلام، من می\u200cخواهم فارسی صحبت کنم."


def test_cleaners():
    assert clean_text("  Hello\t\tWORLD \n", ["basic_cleaners"]) == "hello world"
    assert clean_text("Mr. Smith met Dr. Jones.", ["english_cleaners"]) == "mister smith met doctor jones."
    assert clean_text("Ｆｕｌｌ\u00a0width ﬁ", ["multilingual_cleaners"]) == "full width fi"
    # Turkish "İstanbul": one letter i, not i and a combining dot above (what str.lower gives).
    assert clean_text("İstanbul İyi", ["multilingual_cleaners"]) == "istanbul iyi"
    # A trade mark sign is unread, as ® is: NFKC had made "Acme™" the word "acmetm".
    assert clean_text("Acme™ and Foo℠ bar", ["multilingual_cleaners"]) == "acme and foo bar"


def test_turkish_capital_i_is_dotless_and_a_numeral_keeps_its_letters():
    texts = ["IRAK ve Işık, İstanbul'da II. Mehmet.", "I am Iris."]
    assert prepare_texts(texts[:1], ["multilingual_cleaners"], "characters", "tr", numbers="words") == [
        "ırak ve ışık, istanbul'da ikinci mehmet."
    ]
    assert prepare_texts(texts[:1], ["multilingual_cleaners"], "characters", "az") == [
        "ırak ve ışık, istanbul'da ii. mehmet."
    ]
    assert prepare_texts(texts[1:], ["english_cleaners"], "characters", "en") == ["i am iris."]
    assert clean_text("  As Is  ", ["no_cleaners"]) == "  As Is  "
    with pytest.raises(XttsError, match="unknown cleaner 'shout'"):
        clean_text("x", ["shout"])


def test_whitespace_is_every_unicode_space_and_abbreviations_expand_in_their_order():
    import re
    import sys

    spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
    assert len(spaces) == 29 and "\u200c" not in spaces and "\u3000" in spaces
    text = f"{spaces}a{spaces}b\u200cc {spaces}"
    assert clean_text(text, ["basic_cleaners"]) == re.sub(r"\s+", " ", text.lower()).strip() == "a b\u200cc"
    # One after the other, as the recipes do: "mr." becomes "mister", after which "st." no longer
    # follows a word boundary (one pattern over all of them would give "mistersaint.").
    # An abbreviation that ends the text keeps its full stop: the sentence's too.
    assert clean_text("Mr.St. and Drs. Co.", ["english_cleaners"]) == "misterst. and doctors company."
    assert clean_text("Mrs. Smith, jr.", ["english_cleaners"]) == "missus smith, junior."
    assert clean_text("\u017ft. Paul", ["english_cleaners"]) == "saint paul"  # a long s, matched ignoring case
    # Not inside an address: the recipes' pattern made "bbc.co.uk" "bbc.companyuk".
    assert (
        clean_text("Smith & Co. at bbc.co.uk, jo@co.uk", ["english_cleaners"])
        == "smith & company at bbc.co.uk, jo@co.uk"
    )


def test_multilingual_cleaners_keep_every_persian_character():
    cleaned = clean_text(PERSIAN, ["multilingual_cleaners"])
    assert cleaned == PERSIAN
    assert "\u200c" in cleaned  # the zero-width non-joiner is part of Persian spelling
    # Arabic presentation forms fold to the letters they draw (NFKC), so one letter is one id.
    assert clean_text("\ufef7", ["multilingual_cleaners"]) == "\u0644\u0623"


def test_persian_round_trip_and_padding_id():
    tokenizer = Tokenizer.build([PERSIAN, "Hello | world."], ["multilingual_cleaners"])
    ids = tokenizer.encode(PERSIAN)
    assert len(ids) == len(PERSIAN) and PAD_ID not in ids
    assert tokenizer.decode(ids + [PAD_ID, PAD_ID]) == PERSIAN
    assert tokenizer.decode(tokenizer.encode("Hello | world.")) == "hello | world."
    assert tokenizer.vocab_size == len(set(PERSIAN) | set("hello | world.")) + 1


def test_unknown_characters_are_named():
    tokenizer = Tokenizer.build(["abc"], ["basic_cleaners"])
    with pytest.raises(UnknownCharactersError) as caught:
        tokenizer.encode("abz ж")
    assert caught.value.characters == [" ", "z", "ж"]
    message = str(caught.value)
    assert "'ж' (U+0436)" in message and "'z' (U+007A)" in message


def test_many_texts_encode_as_each_does_alone():
    texts = [PERSIAN, "", "Hello  WORLD", "\U0001f600 non-BMP", "\u00e9t\u00e9", "a"]
    tokenizer = Tokenizer.build(texts, ["multilingual_cleaners"])
    for chunk in (1, 2, 4, 100):  # texts looked up in chunks of `chunk`, crossing their ends
        flat, lengths = tokenizer.encode_many(texts, chunk=chunk)
        assert flat.dtype == np.int32 and lengths.tolist() == [len(tokenizer.encode(t)) for t in texts]
        assert flat.tolist() == [i for text in texts for i in tokenizer.encode(text)]
    flat, lengths = tokenizer.encode_many([])
    assert flat.size == 0 and lengths.size == 0
    with pytest.raises(UnknownCharactersError) as caught:
        tokenizer.encode_many(["hello", "a", "abz \u0436", "q"], chunk=2)
    assert caught.value.index == 2 and caught.value.characters == ["z", "\u0436"]
    with pytest.raises(UnknownCharactersError):
        Tokenizer([], ["no_cleaners"]).encode_many(["", "x"])
    assert Tokenizer([], ["no_cleaners"]).encode_many(["", ""])[1].tolist() == [0, 0]


def test_save_and_load(tmp_path):
    tokenizer = Tokenizer.build([PERSIAN, "abc"], ["multilingual_cleaners"])
    path = tmp_path / "vocab" / "tokenizer.json"
    tokenizer.save(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["pad_id"] == 0 and "\u200c" in saved["characters"]
    assert "س" in path.read_text(encoding="utf-8")  # stored as UTF-8, readable
    loaded = Tokenizer.load(path)
    assert loaded == tokenizer
    assert loaded.encode(PERSIAN) == tokenizer.encode(PERSIAN)
    assert list(tmp_path.joinpath("vocab").iterdir()) == [path]  # no temp file left behind
    for damaged in ("{}", "[]", '{"format": "xtts-tokenizer"}', "nope"):  # the last had said no fix
        path.write_text(damaged, encoding="utf-8")
        with pytest.raises(XttsError, match="not an xtts tokenizer vocabulary|cannot read tokenizer vocabulary") as e:
            Tokenizer.load(path)
        assert e.value.hint.startswith("put back the run's vocab.json"), damaged


def test_a_grown_vocabulary_keeps_every_id_of_the_one_it_grew_from(tmp_path):
    base = Tokenizer.build(["cab"], ["no_cleaners"], languages=["en"], speakers=["ann", "bo"])
    data = Tokenizer.build(["abz \u0436"], ["no_cleaners"], languages=["fa"], speakers=["cy", "ann"])
    grown = base.grown(data)
    assert grown.characters == ["a", "b", "c", " ", "z", "\u0436"]  # the base's ids, then the new symbols sorted
    assert grown.languages == ["en", "fa"] and grown.speakers == ["ann", "bo", "cy"]
    assert grown.symbol_ids("cab") == base.symbol_ids("cab") == [3, 1, 2]
    assert grown.symbol_ids("z\u0436 ") == [5, 6, 4]
    flat, lengths = grown.encode_many(["cab z", "\u0436a"])  # looked up sorted, answered in the grown ids
    assert flat.tolist() == [3, 1, 2, 4, 5, 6, 1] and lengths.tolist() == [5, 2]
    path = tmp_path / "vocab.json"
    grown.save(path)
    assert Tokenizer.load(path) == grown and Tokenizer.load(path).symbol_ids("z") == [5]


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            'Dr. Smith came at 3.5 p.m. today. He said "hello!" Then he left... Was it e.g. a test? Yes.',
            ["Dr. Smith came at 3.5 p.m. today.", 'He said "hello!"', "Then he left...", "Was it e.g. a test?", "Yes."],
        ),
        (
            "Mr. J. R. Tolkien wrote. It sold 1.5 million copies",
            ["Mr. J. R. Tolkien wrote.", "It sold 1.5 million copies"],
        ),
        ("کتاب روی میز است. آیا او آمد؟ بله، او آمد.", ["کتاب روی میز است.", "آیا او آمد؟", "بله، او آمد."]),
        ("no end at all", ["no end at all"]),
        # After a.m. or p.m., a word that starts sentences starts one; a name or a lower-case word does not.
        (
            "We met at 9 a.m. It was late. At 5 p.m. John came. At 5 p.m. the bus left.",
            ["We met at 9 a.m.", "It was late.", "At 5 p.m. John came.", "At 5 p.m. the bus left."],
        ),
        (  # an imperative or a question after the hour starts a sentence; a time zone does not
            "The talk is at 3 p.m. Please arrive early. Is it 5 p.m. EST? Why not.",
            ["The talk is at 3 p.m.", "Please arrive early.", "Is it 5 p.m. EST?", "Why not."],
        ),
        (  # any capital after the hour ends a sentence the time did not open; a day or a zone goes on
            "Dinner at 6 p.m. Snacks all day. Meet at 6 p.m. Friday. Starts at 7 p.m. ET today. It opens at 10 a.m. "
            "Paris time. Tomorrow at 5 p.m. John will come. When I got home at 6 p.m. Dad slept. We took the 6 a.m. "
            "Delta flight.",
            [
                "Dinner at 6 p.m.",
                "Snacks all day.",
                "Meet at 6 p.m. Friday.",
                "Starts at 7 p.m. ET today.",
                "It opens at 10 a.m. Paris time.",
                "Tomorrow at 5 p.m. John will come.",
                "When I got home at 6 p.m. Dad slept.",
                "We took the 6 a.m. Delta flight.",
            ],
        ),
        (  # an abbreviation's full stop before a word in lower case ends no sentence; another full stop does
            "Bake 20 min. then cool. Apple Inc. is big. Mix well. add salt. I like it. iPhone is great. Come in. sit.",
            [
                "Bake 20 min. then cool.",
                "Apple Inc. is big.",
                "Mix well.",
                "add salt.",
                "I like it.",
                "iPhone is great.",
                "Come in.",
                "sit.",
            ],
        ),
        ("ok. see you. bye", ["ok.", "see you.", "bye"]),
        (  # in capitals, a headline's Title Case, or before To, Sharp, a holiday: the sentence goes on
            "SERVICE RESUMES AT 6 A.M. MONDAY. Markets Close At 4 P.M. Amid Selloff. Open daily 9 a.m. To 5 p.m. "
            "Dinner at 8 p.m. Valentine's Day is full. Meet at 5 p.m. Greenwich Mean Time.",
            [
                "SERVICE RESUMES AT 6 A.M. MONDAY.",
                "Markets Close At 4 P.M. Amid Selloff.",
                "Open daily 9 a.m. To 5 p.m.",
                "Dinner at 8 p.m. Valentine's Day is full.",
                "Meet at 5 p.m. Greenwich Mean Time.",
            ],
        ),
        # Initials and abbreviations of the other languages with an alphabet: Russian, German, Spanish.
        (
            "А. С. Пушкин родился в Москве. Он писал стихи, т.е. поэмы.",
            ["А. С. Пушкин родился в Москве.", "Он писал стихи, т.е. поэмы."],
        ),
        (
            "Das kostet ca. zehn Euro, bzw. elf. Hauptstr. 5 ist gut.",
            ["Das kostet ca. zehn Euro, bzw. elf.", "Hauptstr. 5 ist gut."],
        ),
        ("El Sr. García y la Sra. López llegaron. Bien.", ["El Sr. García y la Sra. López llegaron.", "Bien."]),
        ("Am 3. Mai fahren wir. Es ist der 12. Gut.", ["Am 3. Mai fahren wir.", "Es ist der 12.", "Gut."]),
        ("Wir kommen am 3.10. und bleiben. Gut.", ["Wir kommen am 3.10. und bleiben.", "Gut."]),
        # An ordinal before its noun: after a German preposition or a starting article, Turkish's before a word.
        (
            "Er wohnt im 3. Stock. Der 2. Platz ging an sie. 16. yüzyılda oldu.",
            ["Er wohnt im 3. Stock.", "Der 2. Platz ging an sie.", "16. yüzyılda oldu."],
        ),
        # After any word declined as an article, thousands grouped; "Fr." before a name is Frau.
        (
            "Jeder 5. Deutsche hat einen Hund. Der 1.000. Kunde und seinen 100. Geburtstag. Es waren 5. Dann gingen wir.",
            [
                "Jeder 5. Deutsche hat einen Hund.",
                "Der 1.000. Kunde und seinen 100. Geburtstag.",
                "Es waren 5.",
                "Dann gingen wir.",
            ],
        ),
        # A quotation closes with its sentence: German „…“, French « … » with the spaces it sets.
        ("Er sagte: \u201eJa.\u201c Dann ging er.", ["Er sagte: \u201eJa.\u201c", "Dann ging er."]),
        (
            "Il dit : \u00ab\u00a0Bonjour.\u00a0\u00bb Il partit.",
            ["Il dit : \u00ab\u00a0Bonjour.\u00a0\u00bb", "Il partit."],
        ),
        # A telephone number after its abbreviation; a regnal number before a word in lower case.
        ("T\u00e9l. 01 23 45 67 89. Merci.", ["T\u00e9l. 01 23 45 67 89.", "Merci."]),
        (
            "Ludwig XIV. war K\u00f6nig. Chapter IV. The storm came.",
            ["Ludwig XIV. war K\u00f6nig.", "Chapter IV.", "The storm came."],
        ),
        # English abbreviations and short months go on; after one, a word that starts sentences starts one.
        (
            "See fig. 3 and vol. 2. Also Mt. Everest on Jan. 5 with Gen. Lee. He sailed in Oct. It was cold. "
            "He said no. I left. Pears etc. The rest at 5 Main St. Then home.",
            [
                "See fig. 3 and vol. 2.",
                "Also Mt. Everest on Jan. 5 with Gen. Lee.",
                "He sailed in Oct.",
                "It was cold.",
                "He said no.",
                "I left.",
                "Pears etc.",
                "The rest at 5 Main St.",
                "Then home.",
            ],
        ),
        (
            "Read pp. 10-12 and ch. 3 first. Then go 5 mi. It was far.",
            ["Read pp. 10-12 and ch. 3 first.", "Then go 5 mi.", "It was far."],
        ),
        # A quotation that ends in its own mark goes on in lower case: "Stop!" she said.
        (
            '"Stop!" she said. "Now." He did. \u201cWhy?\u201d he asked.',
            ['"Stop!" she said.', '"Now."', "He did.", "\u201cWhy?\u201d he asked."],
        ),
        # A blank line ends a sentence with its stop or without (a heading); one line break does not.
        (
            "Chapter One\n\nIt was a dark\nand stormy night. See fig.\r\n \r\nThe End",
            ["Chapter One", "It was a dark\nand stormy night.", "See fig.", "The End"],
        ),
        ("   ", []),
    ],
)
def test_a_text_splits_into_its_sentences(text, sentences):
    from xtts_cli.data.text import split_sentences

    assert split_sentences(text) == sentences


@pytest.mark.parametrize(
    "text, language, sentences",
    [
        # What the language's reader reads out ends no sentence: it would be read alone, and paused after.
        ("Call ext. 12 at the desk.", "en", ["Call ext. 12 at the desk."]),
        (
            "Rev. Green spoke to Sen. Brown and Gov. White. Then Pres. Lincoln spoke.",
            "en-us",
            ["Rev. Green spoke to Sen. Brown and Gov. White.", "Then Pres. Lincoln spoke."],
        ),
        (
            "He lives in Apt. 4 now. Read Sec. 4 today. Open Mon.-Fri. from 9.",
            "en",
            ["He lives in Apt. 4 now.", "Read Sec. 4 today.", "Open Mon.-Fri. from 9."],
        ),
        ("Siehe Tab. 4 und Abb. 2 bitte.", "de", ["Siehe Tab. 4 und Abb. 2 bitte."]),
        ("Пришло ок. 200 человек. Потом.", "ru", ["Пришло ок. 200 человек.", "Потом."]),
        ("Vive en EE. UU. desde 2010. Bien.", "es", ["Vive en EE. UU. desde 2010.", "Bien."]),
        # A year's letter after its number, before a name, is inside its sentence (one had been split there).
        ("В 2010 г. Россия провела перепись.", "ru", ["В 2010 г. Россия провела перепись."]),
        ("W 2004 r. Polska przystąpiła do Unii.", "pl", ["W 2004 r. Polska przystąpiła do Unii."]),
        # A list's "and so on" before a capital ends its sentence.
        ("Kupiliśmy jabłka itd. Potem poszliśmy.", "pl", ["Kupiliśmy jabłka itd.", "Potem poszliśmy."]),
        ("Estuve en EE. UU. Fue genial.", "es", ["Estuve en EE. UU.", "Fue genial."]),
        (
            "Fr. Müller kam am Sa., 4. Mai. Bis Fr. Dann frei.",
            "de",
            ["Fr. Müller kam am Sa., 4. Mai.", "Bis Fr.", "Dann frei."],
        ),
        # A noun's abbreviation before a capital ends its sentence; "so." before a number is no Sonntag;
        # a count after a pronoun, before a word that starts sentences, ends one.
        (
            "Wir treffen uns am Hbf. Dann gehen wir. Preise inkl. MwSt. Versand extra. Ach so. 2 Tage noch. Er gab "
            "ihr 5. Dann ging er. Sa., So. geschlossen.",
            "de",
            [
                "Wir treffen uns am Hbf.",
                "Dann gehen wir.",
                "Preise inkl. MwSt.",
                "Versand extra.",
                "Ach so.",
                "2 Tage noch.",
                "Er gab ihr 5.",
                "Dann ging er.",
                "Sa., So. geschlossen.",
            ],
        ),
        (
            "Spotkajmy się o godz. 10 przy ul. Długiej, np. jutro.",
            "pl",
            ["Spotkajmy się o godz. 10 przy ul. Długiej, np. jutro."],
        ),
        # ... and a word that starts sentences still starts one after it; 30 sec. is seconds.
        ("I met the Sen. It was late.", "en", ["I met the Sen.", "It was late."]),
        ("It took 30 sec. Then it ended.", "en", ["It took 30 sec.", "Then it ended."]),
        # A number's full stop before a word in lower case, where ordinals and years are written so, ends none.
        (
            "W 1999. roku? Zajął 2. miejsce. Mam 5. Ty też.",
            "pl",
            ["W 1999. roku?", "Zajął 2. miejsce.", "Mam 5.", "Ty też."],
        ),
        ("A 2. helyen végzett 2024. május 1-jén.", "hu", ["A 2. helyen végzett 2024. május 1-jén."]),
        ("Márc. 15-én kb. 5 ember jött, pl. Anna.", "hu", ["Márc. 15-én kb. 5 ember jött, pl. Anna."]),
    ],
)
def test_an_abbreviation_its_language_reads_out_ends_no_sentence(text, language, sentences):
    from xtts_cli.data.text import split_sentences

    assert split_sentences(text, language) == sentences


def test_a_sentence_too_long_is_cut_at_its_clauses_then_between_words():
    from xtts_cli.data.text import split_to_fit

    def fits(part: str) -> bool:
        return len(part) <= 16

    assert split_to_fit("short enough", fits) == ["short enough"]
    # Each clause cut into parts of even length: packed in turn, "two three four" then "five,"
    # left one word to be said alone after a pause.
    assert split_to_fit("one, two three four five, six، seven", fits) == [
        "one,",
        "two three",
        "four five,",
        "six، seven",
    ]
    assert split_to_fit("the bus was late again this morning, twenty five minutes.", lambda part: len(part) <= 30) == [
        "the bus was late",
        "again this morning,",
        "twenty five minutes.",
    ]
    # A word no space parts is cut between its letters, each piece the longest that fits: left whole,
    # 100,000 letters had been given to the model at once (its attention ran out of memory).
    told: list[str] = []
    assert split_to_fit("ok unbreakablewordthatislong", fits, told.append) == ["ok", "unbreakablewordt", "hatislong"]
    assert told == ["unbreakablewordthatislong"]
    calls = []
    pieces = split_to_fit("a" * 100_000, lambda part: calls.append(part) or len(part) <= 100)
    assert pieces == ["a" * 100] * 1000 and len(calls) < 20 * 1000 and max(map(len, calls[1:])) <= 256


def test_punctuation_the_vocabulary_lacks_is_left_out_and_another_script_refused():
    tokenizer = Tokenizer.build(["the cat sat"], ["no_cleaners"])
    assert tokenizer.speakable("the cat; sat!") == ("the cat sat", ["!", ";"])
    assert tokenizer.speakable("the cat sat") == ("the cat sat", [])
    prepared, left_out = tokenizer.speakable("the \u0436 cat\u060c")  # a Cyrillic letter, a Persian comma
    assert prepared == "the \u0436 cat" and left_out == ["\u060c"]
    with pytest.raises(UnknownCharactersError) as caught:
        tokenizer.symbol_ids(prepared)
    assert caught.value.characters == ["\u0436"]


def test_an_accented_letter_the_vocabulary_lacks_is_read_as_its_plain_letter():
    english = Tokenizer.build(["the naive cafe and zoe"], ["no_cleaners"])
    assert english.speakable("a na\u00efve caf\u00e9, zo\u00eb") == (
        "a naive cafe zoe",
        ["\u00e9\u2192e", "\u00eb\u2192e", "\u00ef\u2192i", ","],
    )
    # A Latin letter no accent makes is read as the letters it is written for, where the run has them.
    streets = Tokenizer.build(["the street is at the sea, where eos and thor rest"], ["no_cleaners"])
    assert streets.speakable("stra\u00dfe, \u00e6sir, h\u00f8rt, \u00fe\u00f3r") == (
        "strasse, aesir, hort, thor",
        ["\u00df\u2192ss", "\u00e6\u2192ae", "\u00f3\u2192o", "\u00f8\u2192o", "\u00fe\u2192th"],
    )
    # No plain letter to fall back on (ß in a run without "s", another script): refused, by `symbol_ids`.
    assert english.speakable("stra\u00dfe \u0436") == ("stra\u00dfe \u0436", [])


def test_a_mark_the_vocabulary_lacks_is_read_as_its_nearest_it_knows():
    # A Persian run whose data wrote ، and ؟ hears "," and "?" typed on a Latin keyboard as them.
    persian = Tokenizer.build(
        ["\u0633\u0644\u0627\u0645\u060c \u0686\u0637\u0648\u0631\u06cc\u061f \u062e\u0648\u0628\u0645."],
        ["no_cleaners"],
    )
    assert persian.speakable("\u0633\u0644\u0627\u0645, \u0686\u0637\u0648\u0631\u06cc?") == (
        "\u0633\u0644\u0627\u0645\u060c \u0686\u0637\u0648\u0631\u06cc\u061f",
        [",\u2192\u060c", "?\u2192\u061f"],
    )
    # An English run: "!" ends a sentence as "." does; a dash, a colon or a semicolon parts a clause
    # as a comma does; a mark with nothing near it known is left out.
    english = Tokenizer.build(["hello, there. how are you?"], ["no_cleaners"])
    assert english.speakable("wow! yes: no; so \u2014 then \u00bfwhy") == (
        "wow. yes, no, so, then why",
        ["!\u2192.", ":\u2192,", ";\u2192,", "\u2014\u2192,", "\u00bf"],
    )
    # A typographer's apostrophe and quotes as a typewriter's ("It’s" from a word processor had been "it s"),
    # and back; an apostrophe with no mark near it, inside a word, leaves no gap.
    typed = Tokenizer.build(["it's john's \"car\"."], ["no_cleaners"])
    assert typed.speakable("it\u2019s \u201cjohn\u2019s\u201d car") == (
        "it's \"john's\" car",
        ["\u2019\u2192'", '\u201c\u2192"', '\u201d\u2192"'],
    )
    curly = Tokenizer.build(["it\u2019s john\u2019s car."], ["no_cleaners"])
    assert curly.speakable("it's john's car") == ("it\u2019s john\u2019s car", ["'\u2192\u2019"])
    assert english.speakable("it\u2019s 'there'") == ("its there", ["'", "\u2019"])
    # ... only before a contraction's end: elsewhere a gap, as for any mark ("rocknroll" had been said).
    assert (
        english.speakable("rock \u2019n\u2019 roll, o\u2019brien don\u2019t i\u2019m")[0]
        == "rock n roll, o brien dont im"
    )
    # The letter ʼ of a Ukrainian run whose data wrote it, and Hebrew's geresh (a '"' is a quote as often as
    # a gershayim: left out).
    ukrainian = Tokenizer.build(["\u043f\u02bc\u044f\u0442\u044c."], ["no_cleaners"])
    assert ukrainian.speakable("\u043f\u2019\u044f\u0442\u044c")[0] == "\u043f\u02bc\u044f\u0442\u044c"
    hebrew = Tokenizer.build(["\u05d2\u05f3\u05d9 \u05e6\u05d4\u05f4\u05dc"], ["no_cleaners"])
    assert hebrew.speakable('\u05d2\'\u05d9 "\u05e6\u05d4"')[0] == "\u05d2\u05f3\u05d9 \u05e6\u05d4"


@pytest.mark.parametrize(
    "text, said",
    [
        ("Turn into 42 Main St. today.", "turn into 42 main street today."),
        ("1st St. and 221B Baker St.", "1st street and 221b baker street."),
        ("3rd St. No. 7, Main St. Apt 4", "3rd street no. 7, main street apt 4"),
        ("Main St. APT 4, King St. Units 4-6", "main street apt 4, king street units 4-6"),
        (
            "Dr. Smith lives on Mulholland Dr., by 5th St. NW.",
            "doctor smith lives on mulholland drive, by 5th street nw.",
        ),
        ("VISIT ST. LOUIS ON MAIN ST.", "visit saint louis on main street."),
        ("Then St. Mary's, and the Great St. Bernard.", "then saint mary's, and the great saint bernard."),
        ("I saw the Dr. yesterday at St. Paul's.", "i saw the doctor yesterday at saint paul's."),
    ],
)
def test_st_and_dr_after_a_name_or_a_number_are_a_street_and_a_drive_and_before_a_name_a_saint_and_a_doctor(text, said):
    assert clean_text(text, ["english_cleaners"]) == said


def test_english_titles_and_streets_read_alike_with_either_cleaners_and_feet_stay_feet():
    # And a unit's full stop inside a sentence ("6 ft. tall") is no full stop in what is read.
    from xtts_cli.data.text import prepare_texts

    texts = [
        "Meet Gen. Lee at 10 St. James St., by Mulholland Dr. and Ft. Worth; Capt. Cook is 6 ft. tall.",
        "Rev. King, Lt. Dan, Sgt. Pepper, Col. Mustard and Maj. Tom saw Drs. Who, Esq. (rev. 2)",
    ]
    said = [
        "meet general lee at ten saint james street, by mulholland drive and fort worth; captain cook is six feet"
        " tall.",
        "reverend king, lieutenant dan, sergeant pepper, colonel mustard and major tom saw doctors who, esquire"
        " (rev. two)",
    ]
    for cleaners in (["english_cleaners"], ["multilingual_cleaners"]):
        prepared = prepare_texts(texts, cleaners, language="en", numbers="words")
        assert prepared[0] == said[0], cleaners
        if cleaners == ["multilingual_cleaners"]:  # Ito's list reads "rev." before a number too
            assert prepared[1] == said[1]
        # What synthesize reports it read (`read_as`) is what it read, also for a phonemes run.
        tokenizer = Tokenizer.build(["a"], cleaners, frontend="phonemes", languages=["en"], numbers="words")
        assert tokenizer.reading(texts[0]) == said[0]
    # Written without full stops, as British English writes them; in mixed case an acronym in capitals
    # is its letters, and a case's "v." is versus.
    assert prepare_texts(
        ["Meet Dr Jones at 12 High St, then St Paul's on Oak Dr; the US and the WHO; Brown v. Board; IT's fine."],
        ["english_cleaners"],
        language="en",
        numbers="words",
    ) == [
        "meet doctor jones at twelve high street, then saint paul's on oak drive; the u s and the w h o; brown "
        "versus board; it's fine."
    ]
    # A run whose vocabulary reads digits as characters was trained on the text as it was written.
    assert prepare_texts(texts[:1], ["multilingual_cleaners"], language="en", numbers="characters")[0] == (
        texts[0].lower()
    )
    # An era in capitals is said letter by letter, "ad" and "ce" in lower case are words; one that ends
    # the text keeps its full stop.
    assert prepare_texts(
        ["In 79 AD, or AD 79, the 3 ADs ran; 1 CE.", "Rome fell in 476 A.D."],
        ["english_cleaners"],
        language="en",
        numbers="words",
    ) == ["in seventy nine a d, or a d seventy nine, the three ads ran; one c e.", "rome fell in four seventy six a d."]
    # Before a capital a unit's full stop may end a sentence, and stays.
    assert prepare_texts(
        ["Wait 5 min. Then go 2 km. now and 3 mi. more."], ["multilingual_cleaners"], language="en", numbers="words"
    ) == ["wait five minutes. then go two kilometers now and three miles more."]
