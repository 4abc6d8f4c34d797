"""The text front end's languages: espeak-ng phonemes, Persian normalisation, the scan's phoneme cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from xtts_cli.config.schema import DataConfig
from xtts_cli.data import phonemes
from xtts_cli.data.persian import normalize_persian, number_to_words
from xtts_cli.data.scan import scan_dataset
from xtts_cli.data.text import Tokenizer, prepare_texts
from xtts_cli.errors import XttsError

PERSIAN_DATA = Path(__file__).parent / "data" / "persian"

# Sentences of the user's own notes (../shared/seeds/gpu-issues-complete-guide.md), as typed there:
# digits, a Latin acronym, and verbs whose prefix lost its zero-width non-joiner.
USER_SENTENCE = "مصرف GPU به شکل نوسانی (spike/cycle) بین ۲٪ تا ۴۰٪ قرار دارد"
USER_HEADING = "مشکل ۱: استفاده پایین GPU (~15%)"


def test_phonemes_keep_punctuation_and_word_boundaries():
    english, persian = phonemes.phonemize(["Hello, world! Green trees grow."], "en")[0], None
    assert english.count(",") == 1 and english.count("!") == 1 and english.endswith(".")
    assert len(english.split()) == 5  # one space between words, none lost
    assert "ˈ" in english  # stress marks
    persian = phonemes.phonemize(["سلام، دنیا! کتاب‌ها را می‌خوانم؟"], "fa")[0]
    assert "،" in persian and "!" in persian and persian.endswith("؟")  # Persian punctuation kept too
    assert len(persian.split()) == 5
    assert not any("\u0600" <= c <= "\u06ff" and c.isalpha() for c in persian)  # every letter became a phoneme


def test_language_codes_resolve_to_espeak_voices_or_fail_in_one_line_naming_them():
    assert phonemes.espeak_language("en") == "en-us"
    assert phonemes.espeak_language("EN-GB") == "en-gb"
    # A locale as datasets and systems write it (pt_BR) is the code espeak-ng spells pt-br.
    from xtts_cli.config import resolve_config

    assert resolve_config(None, sets=["data.language=pt_BR"]).config.data.language == "pt-br"
    assert phonemes.espeak_language("fa") == "fa"
    assert phonemes.espeak_language("fr") == "fr-fr"
    assert phonemes.espeak_language("no") == "nb"  # Norwegian's ISO 639-1 code: espeak-ng's Bokmål
    with pytest.raises(XttsError) as caught:
        phonemes.espeak_language("tlh", where="data.datasets[1].language")
    assert len(caught.value.lines) == 1
    message = caught.value.lines[0]
    assert message == "data.datasets[1].language: espeak-ng has no language 'tlh'; did you mean th?"
    assert "codes (en, en-us" in caught.value.hint and "text_frontend: characters" in caught.value.hint
    with pytest.raises(XttsError) as typo:
        phonemes.espeak_language("enn")
    assert typo.value.lines == [
        "data.language: espeak-ng has no language 'enn'; did you mean en, en-us-nyc, en-us, en-gb?"
    ]


def test_persian_number_words():
    expected = {
        0: "صفر",
        7: "هفت",
        13: "سیزده",
        21: "بیست و یک",
        105: "صد و پنج",
        999: "نهصد و نود و نه",
        1000: "هزار",
        1404: "هزار و چهارصد و چهار",
        2025: "دو هزار و بیست و پنج",
        1_250_000: "یک میلیون و دویست و پنجاه هزار",
        3_000_000_000: "سه میلیارد",
        -40: "منفی چهل",
        10**15: "یک" + " صفر" * 15,  # past تریلیون, digit by digit: a transcript's serial, not an error
    }
    assert {value: number_to_words(value) for value in expected} == expected


def test_persian_normalisation_of_real_sentences():
    assert normalize_persian(USER_SENTENCE) == "مصرف GPU به شکل نوسانی (spike/cycle) بین دو درصد تا چهل درصد قرار دارد"
    assert normalize_persian(USER_HEADING) == "مشکل یک: استفاده پایین GPU (حدود پانزده درصد)"
    # Arabic keyboard letters, Arabic-Indic digits with the Persian separators, a tatweel and a
    # right-to-left mark: one form each, numbers read out.
    arabic = "علي كتاب\u0640ها را در سال ١٤٠٤ به قيمت ۱٬۲۵۰ تومان و ۳٫۵ کیلو خريد\u200f."
    assert normalize_persian(arabic) == (
        "علی کتابها را در سال هزار و چهارصد و چهار به قیمت هزار و دویست و پنجاه تومان و سه ممیز پنج کیلو خرید."
    )
    # The zero-width non-joiner stays inside a word, goes at its edges and where it repeats, and the
    # verb prefix typed with a space gets it.
    assert normalize_persian("می خواهم \u200cکتاب\u200c\u200cها را بخوانم\u200c. نمی دانم") == (
        "می\u200cخواهم کتاب\u200cها را بخوانم. نمی\u200cدانم"
    )
    assert normalize_persian("مدرسۀ ما، ۳کیلو") == "مدرسه\u0654 ما، سه کیلو"
    # A time and a date as they are said: the day an ordinal, the month by name (Solar Hijri for 13xx-14xx).
    assert normalize_persian("ساعت ۹:۳۰ و ۱۴:۰۰، روز ۱۴۰۲/۰۵/۲۳") == (
        "ساعت نه و سی دقیقه و چهارده، روز بیست و سوم مرداد هزار و چهارصد و دو"
    )
    assert normalize_persian("۲۰۲۳/۱۱/۳۰") == "سی\u200cام نوامبر دو هزار و بیست و سه"
    assert normalize_persian("دما -۵ درجه") == normalize_persian("دما \u2212۵ درجه") == "دما منفی پنج درجه"
    # Ordinals in digits with their suffix, and a comparison before a number; a year's م (میلادی) and
    # a word after a number are not ordinals.
    assert normalize_persian("رتبه ۳ام، ۲۱مین سالگرد، فصل ۵م، بار ۳۰ام، ۲۱ امین دوره و ۵-امین بار") == (
        "رتبه سوم، بیست و یکمین سالگرد، فصل پنجم، بار سی\u200cام، بیست و یکمین دوره و پنجمین بار"
    )
    assert normalize_persian("سال ۲۰۲۴م، ۵ متر و ۳ ماه؛ >۵۰ نفر و <۵ خطا") == (
        "سال دو هزار و بیست و چهار میلادی، پنج متر و سه ماه؛ بیش از پنجاه نفر و کمتر از پنج خطا"
    )
    # A year's era: solar and lunar Hijri, before Christ; its full stop ends a sentence only at the end.
    assert normalize_persian("در ۱۳۵۷ ه.ش و ۱۴۴۵ ه.ق، ۵۰۰ ق.م. و سپس ۲۰۲۴ م.") == (
        "در هزار و سیصد و پنجاه و هفت هجری شمسی و هزار و چهارصد و چهل و پنج هجری قمری، پانصد قبل از میلاد و "
        "سپس دو هزار و بیست و چهار میلادی."
    )
    # A number led by 0 (a mobile number) digit by digit, not nine billion.
    assert normalize_persian("۰۹۱۲۳") == "صفر نه یک دو سه"
    # Already normal text is left as it is.
    clean = "دیروز مهمان فنجان\u200cهای سنگین را دید."
    assert normalize_persian(clean) == clean


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # A day before its month's name, and a century, are ordinals; dates day first, with dashes or dots.
        ("۱۲ فروردین ۱۴۰۳، قرن ۲۱", "دوازدهم فروردین هزار و چهارصد و سه، قرن بیست و یکم"),
        (
            "۱۴۰۲-۰۳-۱۵ و ۱۵/۰۶/۱۳۷۰ و ۱۴۰۲.۰۵.۱۲",
            "پانزدهم خرداد هزار و چهارصد و دو و پانزدهم شهریور هزار و سیصد و هفتاد و دوازدهم مرداد هزار و چهارصد و دو",
        ),
        # A slash as a decimal point where it cannot be a proper fraction, or a percent or scale follows.
        (
            "تورم ۳۸/۵ درصد، معدل ۱۷/۵، ۲/۵ میلیارد و ۳/۴ کیلو",
            "تورم سی و هشت ممیز پنج درصد، معدل هفده ممیز پنج، دو ممیز پنج میلیارد و سه چهارم کیلو",
        ),
        # Zeros after the decimal point are said; separators typed for others are read as meant.
        (
            "۰.۰۵ درصد، ۱۲.۵۰۰ تومان، ۱.۲۵۰.۰۰۰ تومان، ۱٬۵ میلیون، ۱۲,۵",
            "صفر ممیز صفر پنج درصد، دوازده هزار و پانصد تومان، یک میلیون و دویست و پنجاه هزار تومان، یک ممیز پنج میلیون، دوازده ممیز پنج",
        ),
        # A dash between numbers is a range; a phone number or code is read digit by digit, in its groups.
        ("۱۰-۱۵ درجه، ۲۰٪-۳۰٪، دما -۵", "ده تا پانزده درجه، بیست درصد تا سی درصد، دما منفی پنج"),
        (
            "تلفن ۰۲۱-۸۸۷۷۶۶۵۵، کد پستی ۱۴۳۹۸۱۳۱۱۱",
            "تلفن صفر دو یک، هشت هشت هفت هفت شش شش پنج پنج، کد پستی یک چهار سه نه هشت یک سه یک یک یک",
        ),
        # Page, volume, before and after noon, an era where it stands; a time with its seconds.
        (
            "ج. ۲، ص. ۱۰۳، ساعت ۱۰:۳۰ق.ظ و ۱:۲۵:۳۰، قرن ۵ ق.م",
            "جلد دو، صفحه صد و سه، ساعت ده و سی دقیقه قبل از ظهر و یک و بیست و پنج دقیقه و سی ثانیه، قرن پنجم قبل از میلاد",
        ),
        ("٪۲۵، نمره ۱۸/۲۰، ۲ ۱/۲ و پلاک ۱۲/۳", "بیست و پنج درصد، نمره هجده از بیست، دو و نیم و پلاک دوازده بر سه"),
        # A phone number or code ends its sentence; the Arabic comma between thousands; +, x and ٪ before a space.
        (
            "موبایل ۰۹۱۲-۳۴۵-۶۷۸۹. کد پستی: ۱۲۳۴۵۶۷۸۹۰. تلفن ۸۸۷۷۶۶۵۵.",
            "موبایل صفر نه یک دو، سه چهار پنج، شش هفت هشت نه. کد پستی: یک دو سه چهار پنج شش هفت هشت نه صفر. تلفن هشت هشت هفت هفت شش شش پنج پنج.",
        ),
        ("۱،۰۰۰ نفر، ۲،۵۰۰،۰۰۰ تومان، اعداد ۱، ۲", "هزار نفر، دو میلیون و پانصد هزار تومان، اعداد یک، دو"),
        (
            "+۵٪، شماره +۹۸ ۹۱۲ ۳۴۵ ۶۷۸۹، ۱۹۲۰x۱۰۸۰، ۳x، تخفیف ٪ ۲۰",
            "مثبت پنج درصد، شماره مثبت نه هشت، نه یک دو، سه چهار پنج، شش هفت هشت نه، هزار و نهصد و بیست در هزار و هشتاد، "
            "سه برابر، تخفیف بیست درصد",
        ),
        ("رتبه ۱۰۰۰۰۰۰۰۰۰۰۰۰۰۰۰ام", "رتبه یک" + " صفر" * 14 + " صفرم"),
        # A version or an address in dotted numbers: each number, then نقطه (it had read ممیز with a dot left).
        ("نسخه ۲.۳.۱ و ۱۹۲.۱۶۸.۱.۱", "نسخه دو نقطه سه نقطه یک و صد و نود و دو نقطه صد و شصت و هشت نقطه یک نقطه یک"),
        # A unit in Latin letters after a number.
        (
            "۱۲۰ km/h، ۵kg، ۳۷ °C و ۱۶ GB",
            "صد و بیست کیلومتر بر ساعت، پنج کیلوگرم، سی و هفت درجه سانتی\u200cگراد و شانزده گیگابایت",
        ),
        # The month May after a day, and می before a word that is no verb, keep their space; a joiner after
        # a shadda stays.
        (
            "۱۵ می ۲۰۲۴، ماه می امسال، جام می و نمی از اشک، می خواهم، مهمّ\u200cترین",
            "پانزدهم می دو هزار و بیست و چهار، ماه می امسال، جام می و نمی از اشک، می\u200cخواهم، مهمّ\u200cترین",
        ),
    ],
)
def test_persian_dates_decimals_ranges_and_codes_are_read_as_a_newsreader_says_them(text, said):
    assert normalize_persian(text) == said


def test_persian_text_is_normalised_before_it_is_phonemised_or_read_as_characters():
    characters = prepare_texts([USER_SENTENCE], ["multilingual_cleaners"], "characters", "fa")[0]
    assert "۲" not in characters and "دو درصد" in characters
    spoken = prepare_texts([USER_SENTENCE], ["multilingual_cleaners"], "phonemes", "fa")[0]
    assert spoken == phonemes.phonemize([normalize_persian(USER_SENTENCE.lower())], "fa")[0]
    # English is not touched by the Persian normaliser.
    assert prepare_texts(["Room 101."], ["basic_cleaners"], "characters", "en") == ["room 101."]


def test_a_regional_persian_code_is_normalised_as_persian_and_persian_in_latin_letters_is_not():
    # fa-IR (a locale, as many datasets write it) had trained on the letters as typed: Arabic kaf, digits
    text = "كتاب ۱۲"
    persian = prepare_texts([text], ["multilingual_cleaners"], "characters", "fa")
    assert prepare_texts([text], ["multilingual_cleaners"], "characters", "fa-ir") == persian
    assert "ک" in persian[0] and "۱" not in persian[0]
    # fa-latn writes Persian in Latin letters: no Persian letter forms, no number words in Persian script
    assert prepare_texts(["ketab 12"], ["multilingual_cleaners"], "characters", "fa-latn") == ["ketab 12"]


def test_phoneme_tokenizer_round_trip_with_language_and_speaker_ids(tmp_path):
    texts = {"en": "The cat sat, and then it slept.", "fa": "سلام، من می\u200cخواهم فارسی صحبت کنم."}
    prepared = [prepare_texts([text], ["english_cleaners"], "phonemes", lang)[0] for lang, text in texts.items()]
    tokenizer = Tokenizer.build(
        prepared,
        ["english_cleaners"],
        frontend="phonemes",
        languages=["en", "fa"],
        speakers=["anna", "bahram"],
        prepared=True,
    )
    for language, text in texts.items():
        ids = tokenizer.encode(text, language, "bahram")
        assert ids[:2] == [tokenizer.languages.index(language), 1]
        assert tokenizer.decode(ids[2:]) == tokenizer.prepare(text, language)
    assert tokenizer.encode(texts["en"], speaker="nobody")[1] == -1  # a speaker the run does not list
    with pytest.raises(XttsError, match="not trained on 'de'; it speaks en, fa"):
        tokenizer.encode("Hallo", "de")
    # A resume given German clips: grown by a run that starts from this one, not thrown away (--fresh).
    from types import SimpleNamespace

    from xtts_cli.data.plan import conditioning_ids

    german = SimpleNamespace(source="metadata.csv:3", id="g1", language="de", speaker="anna")
    with pytest.raises(XttsError) as caught:
        conditioning_ids([german], tokenizer)
    assert str(caught.value) == "metadata.csv:3 (g1): language 'de' is not one this run was started with (en, fa)"
    assert caught.value.hint.startswith("train it in a new run that starts from this one (xtts train --init-from RUN")
    tokenizer.save(tmp_path / "vocab.json")
    assert Tokenizer.load(tmp_path / "vocab.json") == tokenizer
    flat, lengths = tokenizer.encode_many(prepared, prepared=True, prefixes=np.array([[0, 0], [1, -1]]))
    assert flat.tolist() == tokenizer.encode(texts["en"], "en", "anna") + tokenizer.encode(texts["fa"], "fa")
    assert lengths.tolist() == [len(prepared[0]) + 2, len(prepared[1]) + 2]


def test_the_scan_phonemises_once_and_keeps_the_phonemes_with_its_memo(tmp_path, monkeypatch):
    root = tmp_path / "persian"
    shutil.copytree(PERSIAN_DATA, root)
    data = DataConfig(dataset_path=str(root), text_frontend="phonemes", language="fa", eval_fraction=0.0)
    first = scan_dataset(data)
    assert len(first.items) == 8 and all(item.language == "fa" for item in first.items)
    by_id = {item.id: item.phonemes for item in first.items}
    # The clip with digits was read out in words before espeak-ng saw it.
    assert by_id["FA-08"] == phonemes.phonemize([normalize_persian("سال ۱۴۰۴ بود.")], "fa")[0]

    def refuse(texts, language):
        raise AssertionError("phonemised again")

    monkeypatch.setattr(phonemes, "phonemize", refuse)
    again = scan_dataset(data)  # the memo holds the phonemes: espeak-ng is not called
    assert {item.id: item.phonemes for item in again.items} == by_id
    with pytest.raises(AssertionError, match="phonemised again"):  # another language is another scan
        scan_dataset(data.model_copy(update={"language": "fa-latn"}))


def test_phonemes_past_the_text_limit_are_reported_not_truncated(tmp_path):
    root = tmp_path / "persian"
    shutil.copytree(PERSIAN_DATA, root)
    data = DataConfig(
        dataset_path=str(root), text_frontend="phonemes", language="fa", max_text_length=30, scan_cache=False
    )
    scan = scan_dataset(data)
    long = [bad for bad in scan.bad if bad.reason == "text_too_long"]
    assert long and all("phoneme symbols, above data.max_text_length (30)" in bad.detail for bad in long)
    assert all(len(item.phonemes or "") <= 30 for item in scan.items)


def test_validate_names_a_language_espeak_lacks(runner, write_config):
    from xtts_cli.cli.app import app

    path = write_config(f"data:\n  dataset_path: {PERSIAN_DATA}\n  text_frontend: phonemes\n  language: xx\n")
    result = runner.invoke(app, ["validate", "--config", str(path), "--json"])
    assert result.exit_code != 0
    assert "data.language: espeak-ng has no language 'xx'" in result.output
    # A dataset's own language: named by its key, once (the scan, which would fail on it too, is not run).
    path = write_config(f"data:\n  datasets:\n  - {{path: {PERSIAN_DATA}, language: xx}}\n  text_frontend: phonemes\n")
    findings = json.loads(runner.invoke(app, ["validate", "--config", str(path), "--json"]).stdout)["findings"]
    assert [(f["id"], f["message"].split(";")[0]) for f in findings if f["severity"] == "error"] == [
        ("language-unknown", "data.datasets[0].language: espeak-ng has no language 'xx'")
    ]


def test_a_few_transcripts_in_another_script_are_named_not_trained_without_a_word(tmp_path):
    """Two lines of 40 in Cyrillic and Arabic under `en` (clips listed in the wrong corpus) had trained
    as English, their letters new symbols, with nothing said: under the share `dataset-script` takes."""
    import shutil

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.data.scan import BUNDLED_SAMPLE
    from xtts_cli.diagnosis.checkup import scan_findings

    root = tmp_path / "d"
    shutil.copytree(BUNDLED_SAMPLE, root)
    lines = (root / "metadata.csv").read_text(encoding="utf-8").splitlines()
    for index, text in ((4, "Привет, как дела сегодня?"), (5, "سلام دوست من چطوری؟")):
        lines[index] = f"{lines[index].split('|')[0]}|{text}|{text}"
    (root / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = scan_findings(XttsConfig(data={"dataset_path": str(root), "scan_cache": False}))[2]
    assert [(f.severity, f.message) for f in found if f.id == "dataset-stray-script"] == [
        (
            "warning",
            "2 of 40 transcripts of dataset d are in a script its language en is not written in (Cyrillic in "
            "XTTS001-0005, Arabic in XTTS001-0006): they would train as en; check those clips are its speech and "
            "their texts theirs, or leave them out",
        )
    ]
    assert not [f for f in found if f.id == "dataset-script"]  # not "mostly": that one is said otherwise


def test_transcripts_in_a_script_their_language_is_not_written_in_are_a_warning_and_with_phonemes_an_error():
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.diagnosis.checkup import scan_findings

    def script_messages(language: str) -> list[str]:
        config = XttsConfig(data={"datasets": [{"path": str(PERSIAN_DATA), "language": language}]})
        return [f.message for f in scan_findings(config)[2] if f.id == "dataset-script"]

    assert script_messages("fa") == []
    (message,) = script_messages("en")
    assert "transcripts of dataset persian are in Arabic script, which its language en is not written in" in message
    assert message.endswith(  # which languages, and how: it had named neither
        "they would train as en and numbers would be read in en; set data.datasets[0].language to their language "
        "(Arabic script: ar, fa, ur, ps, sd, ug)"
    )
    # With phonemes, English espeak-ng spells the Persian letter by letter: too long, most clips are put out
    # and the dataset is unusable. The script is the error, first; what it causes says it follows from it
    # (--fix had set data.batch_size to 1 for a batch the wrong language had emptied).
    spelt = XttsConfig(data={"dataset_path": str(PERSIAN_DATA), "text_frontend": "phonemes"})
    found = scan_findings(spelt)[2]
    assert [(f.id, f.severity) for f in found] == [("dataset-script", "error"), ("dataset-unusable", "error")]
    assert "espeak-ng would spell them letter by letter" in found[0].message
    assert found[0].message.endswith("(Arabic script: ar, fa, ur, ps, sd, ug; --set data.language=CODE)")
    assert found[1].message.endswith(
        "(but first set the dataset's language: its texts, spelt letter by letter, run long)"
    )
    assert found[1].fix is None


def test_a_word_in_another_script_inside_a_transcript_is_a_warning_with_phonemes(tmp_path):
    # Read in the dataset's language, espeak-ng spells سلام by its letters' names ("arabic seen ..."),
    # and trained so, unsaid; synthesis reads the same word as Persian.
    import shutil

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.diagnosis.checkup import scan_findings

    sample = Path(__file__).parents[1] / "xtts_cli" / "data" / "sample"
    mixed = shutil.copytree(sample, tmp_path / "mixed")
    rows = (sample / "metadata.csv").read_text(encoding="utf-8").splitlines()
    first = rows[0].split("|")
    rows[0] = "|".join([first[0], "I said سلام to her.", "I said سلام to her."])
    # English voices spell Greek too (`voiced_scripts`): named as well.
    rows[1] = "|".join([rows[1].split("|")[0], "The number π is near three.", "The number π is near three."])
    (mixed / "metadata.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")

    def foreign(frontend: str) -> list[str]:
        config = XttsConfig(data={"dataset_path": str(mixed), "text_frontend": frontend})
        return [f.message for f in scan_findings(config)[2] if f.id == "dataset-foreign-words"]

    (message,) = foreign("phonemes")
    assert message.startswith(f"2 of {len(rows)} transcripts of dataset mixed hold words in a script its language en ")
    assert f"('سلام' in {first[0]}, 'π' in " in message
    assert foreign("characters") == []  # its letters are symbols of their own, not spelt


def test_transcripts_with_letters_their_language_lacks_are_a_warning(tmp_path):
    # Spanish under the default `en` had trained its accents as new English symbols and read its numbers
    # in English ("tengo twenty five años"), unsaid; English with a loanword's café is English.
    import shutil

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.diagnosis.checkup import scan_findings

    sample = Path(__file__).parents[1] / "xtts_cli" / "data" / "sample"
    spanish = shutil.copytree(sample, tmp_path / "spanish")
    rows = (sample / "metadata.csv").read_text(encoding="utf-8").splitlines()
    said = ["¿Dónde está el niño?", "El café está en la mesa.", "Mañana comeré pan.", "Tengo veinte años."]
    lines = [f"{row.split('|')[0]}|{said[n % 4]}|{said[n % 4]}" for n, row in enumerate(rows)]
    (spanish / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def letters(path: Path, language: str, **model) -> list[str]:
        config = XttsConfig(data={"datasets": [{"path": str(path), "language": language}]}, model=model)
        return [f.message for f in scan_findings(config)[2] if f.id == "dataset-letters"]

    (message,) = letters(spanish, "en")
    assert message.startswith(
        f"{len(rows)} of {len(rows)} transcripts of dataset spanish hold letters its language en is not written with ("
    )
    assert message.endswith("set data.datasets[0].language to it (es is written with them)"), message
    assert "(ñ á é ó)" in message, message  # the commonest first, ties in order: a set's order had varied run to run
    assert letters(spanish, "es") == [] and letters(sample, "en") == []
    # A vocoder reads no transcript: adapted to this data, it had been warned of its letters all the same.
    assert letters(spanish, "en", kind="vocoder") == []


def test_a_test_sentence_in_a_script_the_run_does_not_read_is_a_warning():
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.diagnosis.checkup import scan_findings

    def said(language: str, sentences: list[str]) -> list[str]:
        config = XttsConfig(
            data={"datasets": [{"path": str(PERSIAN_DATA), "language": language}]},
            training={"test_sentences": sentences},
        )
        return [f.message for f in scan_findings(config)[2] if f.id == "test-sentence-script"]

    assert said("fa", ["کتاب روی میز است.", "2024"]) == []
    (message,) = said("fa", ["کتاب روی میز است.", "Hello there."])
    assert message.startswith("training.test_sentences[1] 'Hello there.' is in Latin script, which the run's ")
    assert "language fa is not written in: its samples would be skipped; write it in the run's language" in message


@pytest.mark.parametrize(
    "text, read",
    [
        ("قیمت $100 است.", "قیمت صد دلار است."),
        # cents, not a decimal (ممیز پنجاه)
        ("قیمت $1,999.50 و £3.5 است.", "قیمت هزار و نهصد و نود و نه دلار و پنجاه سنت و سه پوند و پنجاه پنس است."),
        # a scale before the currency, cents alone
        ("$1.5 میلیون و €0.99", "یک ممیز پنج میلیون دلار و نود و نه سنت"),
        ("۲۵€ دادم", "بیست و پنج یورو دادم"),
        ("۱/۲ لیوان شیر", "یک دوم لیوان شیر"),
        ("۳/۴ کیلو", "سه چهارم کیلو"),
        ("تاریخ ۱۴۰۲/۰۵/۱۲", "تاریخ دوازدهم مرداد هزار و چهارصد و دو"),  # a date, not a fraction
    ],
)
def test_persian_money_and_fractions_are_read_as_persian_says_them(text, read):
    assert normalize_persian(text) == read
