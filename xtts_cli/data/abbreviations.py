"""Abbreviations read out before the vocabulary or espeak-ng meets them: German "z. B." is "zum Beispiel", French
"Mme" "madame", Spanish "Sra." "señora", English "e.g." "for example" (`english_cleaners` reads
Keith Ito's titles, Mr. to Capt., before these; `multilingual_cleaners` leaves them to this list).

They are read with the numbers (`data/text.py` `language_normalizer`), so a run's transcripts and
the text it is given are read alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Optional

__all__ = ["abbreviation_reader", "ends_text", "read_out_before"]

# Each language's common abbreviations (lower case, as the cleaners leave them; "\s?" inside where
# they are written with a space or without: "z. B.", "z.B.").
_WORDS: dict[str, dict[str, str]] = {
    "en": {
        r"e\.\s?g\.": "for example",
        r"i\.\s?e\.": "that is",
        r"etc\.": "et cetera",
        r"vs\.?": "versus",
        r"approx\.": "approximately",
        r"dept\.": "department",
        r"mt\.": "mount",
        r"ave\.": "avenue",
        r"fig\.": "figure",
        r"vol\.": "volume",
        r"nos\.(?=\s*\d)": "numbers",
        r"pp\.(?=\s*\d)": "pages",  # "pp. 10-12": pages ten to twelve
        r"(?<![\w.])p\.(?=\s*\d)": "page",
        r"ch\.(?=\s*\d)": "chapter",
        r"eq\.(?=\s*\d)": "equation",
        r"eqs\.(?=\s*\d)": "equations",
        r"(?<!\d )sec\.(?=\s*\d)": "section",  # not "30 sec." (seconds)
        r"mr\.": "mister",
        r"mrs\.": "missus",  # as it is said; keithito's english_cleaners wrote "misess"
        r"(?<!\d )ms\.": "miz",  # not "10 ms." (milliseconds)
        r"dr\.": "doctor",
        r"prof\.": "professor",
        r"jr\.": "junior",
        r"sr\.": "senior",
        r"sen\.": "senator",
        r"et al\.": "et al",
        r"gov\.": "governor",
        r"pres\.": "president",
        r"apt\.": "apartment",
        r"ext\.(?=\s*\d)": "extension",
        r"c\.(?=\s*\d{3,4}\b)": "circa",  # c. 1250
        # Written without their full stop, as British English writes them: Mr Smith, Mrs Jones.
        r"mrs(?=\s+[^\W\d_])": "missus",
        r"mr(?=\s+[^\W\d_])": "mister",
        r"dr(?=\s+[^\W\d_])": "doctor",  # a drive after a name was read first (`text.before_lowering`)
        r"st(?=\s+[^\W\d_])": "saint",
        # Weekdays that are no English word: Mon. to Fri. ("sat." and "sun." may be a verb and a star).
        r"mon\.": "monday",
        r"tues?\.": "tuesday",
        r"wed\.": "wednesday",
        r"thu(?:rs?)?\.": "thursday",
        r"fri\.": "friday",
        # The rest of the titles english_cleaners reads (Keith Ito's list); "St." and "Dr." that name a
        # street or a drive were read before the text was lowered (`text.before_lowering`).
        r"st\.": "saint",
        r"drs\.": "doctors",
        r"gen\.": "general",
        r"maj\.": "major",
        r"capt\.": "captain",
        r"col\.": "colonel",
        r"lt\.": "lieutenant",
        r"sgt\.": "sergeant",
        r"rev\.(?!\s*\d)": "reverend",  # not "rev. 2" (a revision)
        r"hon\.": "honorable",
        r"esq\.": "esquire",
        r"(?<!\d )(?<!sq )ft\.": "fort",  # not "6 ft." nor "sq ft." (feet)
        # Months: "Jan. 15th" is January fifteenth (numbers.py reads the day after the month).
        r"mar\.(?=\s*\d)": "march",
        r"jan\.": "january",
        r"feb\.": "february",
        r"apr\.": "april",
        r"jun\.": "june",
        r"jul\.": "july",
        r"aug\.": "august",
        r"sept?\.": "september",
        r"oct\.": "october",
        r"nov\.": "november",
        r"dec\.": "december",
    },
    "de": {
        r"z\.\s?b\.": "zum beispiel",
        r"d\.\s?h\.": "das heißt",
        r"u\.\s?a\.": "unter anderem",
        r"usw\.": "und so weiter",
        r"bzw\.": "beziehungsweise",
        r"ca\.": "circa",
        r"evtl\.": "eventuell",
        r"ggf\.": "gegebenenfalls",
        r"vgl\.": "vergleiche",
        r"inkl\.": "inklusive",
        r"bspw\.": "beispielsweise",
        r"zzgl\.": "zuzüglich",
        r"bzgl\.": "bezüglich",
        r"nr\.": "nummer",
        r"dr\.": "doktor",
        r"prof\.": "professor",
        r"hr\.": "herr",
        r"tel\.": "telefon",
        r"abs\.": "absatz",
        r"mio\.": "millionen",
        r"mrd\.": "milliarden",
        r"tsd\.": "tausend",
        r"std\.": "stunden",
        r"s\.(?=\s*\d)": "seite",  # S. 12; not an initial (S. Müller)
        r"kap\.": "kapitel",
        r"abb\.": "abbildung",
        r"tab\.": "tabelle",
        r"bd\.": "band",
        r"jh\.": "jahrhundert",
        r"jhd\.": "jahrhundert",
        r"hbf\.": "hauptbahnhof",
        r"mwst\.": "mehrwertsteuer",
        r"jg\.": "jahrgang",
        r"(?<=\d )j\.(?=\s*alt\b)": "jahre",  # 25 J. alt; not an initial (Peter J. Alt)
        # Weekdays: Mo., Di., Mi., Do. and Sa. are no other word. "so." is (Das ist so.): Sonntag only as a
        # day's (am So., 4. Mai; Fr.-So.; bis So.); "Fr." is Freitag beside another day or a date, else Frau
        # before a name (Fr. Müller), not before a word that starts sentences (Bis Fr. Dann frei.).
        r"mo\.": "montag",
        r"di\.": "dienstag",
        r"mi\.": "mittwoch",
        r"do\.": "donnerstag",
        r"sa\.": "samstag",
        r"so\.(?=\s*,\s*\d)|(?<=[\u2013-])so\.|(?<=am )so\.|(?<=bis )so\.|(?<=\., )so\.": "sonntag",
        # Freitag beside another day (Mo.-Fr., Mo. bis Fr., Fr., 3. Mai; Fr. 3.5.); after a number, Swiss
        # francs (20 Fr.); else Frau before a name (Herr und Fr. Meier).
        r"(?<!\d )fr\.(?=\s*[,\u2013-]|\s*\d{1,2}\.\s*(?:\d|[^\W\d_])|\s+bis\b)|(?<=[\u2013-])fr\.|(?<=\. bis )fr\.|(?<=\. und )fr\.|(?<=\. oder )fr\.|(?<=am )fr\.": (
            "freitag"
        ),
        r"(?<=\d )fr\.": "franken",
        r"(?<!\d )(?<![\u2013-])(?<!\. bis )(?<!\. und )(?<!\. oder )fr\.(?=\s+[^\W\d_])(?!\s+(?:dann|und|aber|das|die|der|den|es|er|sie|wir|ich|ab|bis|danach)\b)": (
            "frau"
        ),
    },
    "nb": {
        r"kl\.": "klokka",
        r"ca\.?(?=\s*\d)": "cirka",
        r"nr\.(?=\s*\d)": "nummer",
        r"s\.(?=\s*\d)": "side",
        r"kap\.": "kapittel",
        r"f\.\s?eks\.": "for eksempel",
        r"bl\.\s?a\.": "blant annet",
        r"osv\.": "og så videre",
        r"mill\.": "millioner",
    },
    "sv": {
        r"kl\.": "klockan",
        r"ca\.": "cirka",
        r"t\.\s?ex\.": "till exempel",
        r"bl\.\s?a\.": "bland annat",
        r"osv\.": "och så vidare",
        r"s\.(?=\s*\d)": "sidan",
        r"kap\.": "kapitel",
        r"ca(?=\s*\d)": "cirka",  # "ca 200", as Swedish writes it
        r"dvs\.?": "det vill säga",
        r"fig\.": "figur",
        r"milj\.": "miljoner",
        r"t\.\s?o\.\s?m\.": "till och med",
    },
    "fr": {
        r"mme\.?": "madame",
        r"mlle\.?": "mademoiselle",
        r"m\.(?=\s+[^\W\d_])": "monsieur",  # M. Dupont; not a metre at a sentence's end
        r"dr\.?": "docteur",
        r"etc\.": "et cetera",
        r"env\.": "environ",
        r"p\.\s?ex\.|par ex\.": "par exemple",
        r"av\.": "avenue",
        r"bd\.?": "boulevard",
        r"n°": "numéro",
        r"tél\.": "téléphone",
        r"p\.(?=\s*\d)": "page",
        r"chap\.": "chapitre",
        r"fig\.": "figure",
        r"vol\.": "volume",
    },
    "es": {
        r"sr\.": "señor",
        r"sra\.": "señora",
        r"srta\.": "señorita",
        r"dr\.": "doctor",
        r"dra\.": "doctora",
        r"ud\.": "usted",
        r"p\.\s?ej\.|por ej\.": "por ejemplo",
        r"uds\.": "ustedes",
        r"etc\.": "etcétera",
        r"aprox\.": "aproximadamente",
        r"pág\.": "página",
        r"avda\.": "avenida",
        r"núm\.": "número",
        r"tel\.": "teléfono",
        r"cap\.": "capítulo",
        r"fig\.": "figura",
        r"vol\.": "volumen",
        r"p\.(?=\s*\d)": "página",
        r"n\.o(?=\s*\d)": "número",  # n.º 12, its º a letter o once cleaned
        r"c/(?=\s*[^\W\d_])": "calle",
        r"izq\.": "izquierda",
        r"dcha\.": "derecha",
        r"ee\.\s?uu\.": "estados unidos",
    },
    "it": {
        r"sig\.ra": "signora",
        r"sig\.": "signor",
        r"dott\.": "dottor",
        r"prof\.": "professor",
        r"ecc\.": "eccetera",
        r"pag\.": "pagina",
        r"tel\.": "telefono",
        r"cap\.": "capitolo",
        r"fig\.": "figura",
        r"vol\.": "volume",
        r"p\.(?=\s*\d)": "pagina",
        r"ad es\.": "ad esempio",
        r"int\.(?=\s*\d)": "interno",
        r"n\.(?=\s*\d)": "numero",
    },
    "pt": {
        r"sr\.": "senhor",
        r"sra\.": "senhora",
        r"dr\.": "doutor",
        r"dra\.": "doutora",
        r"pág\.": "página",
        r"av\.": "avenida",
        r"tel\.": "telefone",
        r"cap\.": "capítulo",
        r"fig\.": "figura",
        r"vol\.": "volume",
        r"p\.(?=\s*\d)": "página",
        r"p\.\s?ex\.": "por exemplo",
        r"n\.o(?=\s*\d)": "número",  # n.º 12, its º a letter o once cleaned
        r"esq\.": "esquerdo",
        r"dto\.": "direito",
        r"apto\.": "apartamento",
        r"profa\.": "professora",
        r"prof\.": "professor",
    },
    "pl": {
        r"godz\.": "godzina",
        r"np\.": "na przykład",
        r"tj\.": "to jest",
        r"ul\.": "ulica",
        r"nr\.?(?=\s*\d)": "numer",
        r"prof\.": "profesor",
        r"dr\.": "doktor",
        r"ok\.(?=\s*\d)": "około",
        r"zob\.": "zobacz",
        r"(?<!\d )s\.(?=\s*\d)": "strona",  # not "w 10 s. 5 razy" (seconds)
        r"rozdz\.": "rozdział",
        r"rys\.(?=\s*\d)": "rysunek",
        r"m\.(?=\s*\d+\b(?!\s*(?:cm|mm|m|km)\b))": "mieszkanie",  # ul. Długa 5 m. 12; not "8 m. 20 cm" (metres)
        r"tel\.": "telefon",
        r"itd\.": "i tak dalej",
        r"itp\.": "i tym podobne",
        r"tzn\.": "to znaczy",
        r"al\.(?=\s+[^\W\d_])": "aleja",
    },
    # Russian: г. a town before its name (after a year it is год, which the numbers read); см. after no
    # number (5 см. is centimetres).
    "ru": {
        r"ул\.": "улица",
        r"д\.(?=\s*\d)": "дом",
        r"кв\.(?=\s*\d)": "квартира",
        # A town before its name, after a preposition or a comma ("в г. Туле", ", г. Москва"): "Г. К. Жуков",
        # "написал Г. Иванов", "Г. Петров выступил" are initials.
        r"(?:(?<=в )|(?<=во )|(?<=из )|(?<=до )|(?<=под )|(?<=, ))г\.(?=\s+[^\W\d_]{2})": "город",
        r"тел\.": "телефон",
        r"(?<!\d)(?<!\d\s)см\.": "смотри",
        r"с\.(?=\s*\d)": "страница",
        r"гл\.(?=\s*\d)": "глава",
        r"напр\.": "например",
        r"рис\.(?=\s*\d)": "рисунок",
        r"проф\.": "профессор",
        r"д-р": "доктор",
        r"ок\.(?=\s*\d)": "около",
        r"т\.\s?е\.": "то есть",
        r"т\.\s?д\.": "так далее",
        r"т\.\s?п\.": "тому подобное",
    },
    "tr": {
        r"dr\.": "doktor",
        r"prof\.": "profesör",
        r"cad\.": "caddesi",
        r"sok\.": "sokak",
        r"mah\.": "mahallesi",
        r"bkz\.": "bakınız",
        r"vb\.": "ve benzeri",
        r"s\.(?=\s*\d)": "sayfa",
        r"no:(?=\s*\d)": "numara",
    },
    "nl": {
        r"dhr\.": "de heer",
        r"mevr\.": "mevrouw",
        r"bijv\.": "bijvoorbeeld",
        r"enz\.": "enzovoort",
        r"ca\.": "circa",
        r"tel\.": "telefoon",
        r"blz\.": "bladzijde",
        r"hfst\.": "hoofdstuk",
        r"p\.(?=\s*\d)": "pagina",
        r"fig\.": "figuur",
        r"dr\.": "doctor",  # the title, as Dutch says it
        r"d\.\s?w\.\s?z\.": "dat wil zeggen",
        r"o\.\s?a\.": "onder andere",
    },
}
# German streets: "Hauptstr. 5" is "Hauptstraße 5", the abbreviation at a word's end.
_GERMAN_STREET = re.compile(r"(?<=[^\W\d_])str\.|\bstr\.", re.IGNORECASE)


def _pattern(words: dict[str, str]) -> re.Pattern:
    # Longest first, each a whole word: "sra." before "sr.", and not the end of another word.
    ordered = sorted(words, key=len, reverse=True)
    return re.compile(r"(?<![\w.])(?:" + "|".join(f"({w})" for w in ordered) + r")(?![\w])", re.IGNORECASE)


_WORDS["da"] = {
    r"kl\.": "klokken",
    r"ca\.?(?=\s*\d)": "cirka",
    r"nr\.(?=\s*\d)": "nummer",
    r"f\.\s?eks\.": "for eksempel",
    r"bl\.\s?a\.": "blandt andet",
    r"osv\.": "og så videre",
    r"mio\.": "millioner",
}
_WORDS["hu"] = {
    # A month shortened before its day (márc. 15-én, aug. 20.), and the shortenings every text has.
    **{
        rf"{short}\.(?=\s*(?:\d|[^\W\d_]*(?:dik|elsej|első)))": month  # before its day, read out or not
        for short, month in zip(
            "jan febr márc ápr máj jún júl aug szept okt nov dec".split(),
            "január február március április május június július augusztus szeptember október november december".split(),
        )
    },
    r"kb\.": "körülbelül",
    r"pl\.": "például",
    r"stb\.": "satöbbi",
    r"ill\.": "illetve",
    r"ld\.": "lásd",
}
_WORDS["no"] = _WORDS["nb"]  # Norwegian as espeak-ng names it (nb) and as ISO 639-1 does
_READERS = {language: (_pattern(words), sorted(words, key=len, reverse=True)) for language, words in _WORDS.items()}


_CLOSING = " \t\n\"'\u201d\u2019\u00bb)]"


def ends_text(match: re.Match) -> bool:
    """Whether only closing quotes and brackets follow `match`: an abbreviation's full stop there is
    its sentence's too ("... and Main St."), and stays when the abbreviation is read out."""
    return not match.string[match.end() :].strip(_CLOSING)


# The word each language reads the numero sign as. The cleaners' NFKC makes № and nº (its º a letter
# o) the word "no", which the readers then read as no ("Дом № 5", "el nº 5").
NUMERO_WORDS = {
    "en": "number",
    "de": "Nummer",
    "fr": "numéro",
    "es": "número",
    "it": "numero",
    "pt": "número",
    "nl": "nummer",
    "sv": "nummer",
    "pl": "numer",
    "ru": "номер",
    "uk": "номер",
    "tr": "numara",
}
# ... and its plural, as №№ 5 и 6 writes it.
NUMERO_PLURALS = {
    "en": "numbers",
    "de": "Nummern",
    "fr": "numéros",
    "es": "números",
    "it": "numeri",
    "pt": "números",
    "nl": "nummers",
    "sv": "nummer",
    "pl": "numery",
    "ru": "номера",
    "uk": "номери",
    "tr": "numaralar",
}
# № and nº as a word of their own ("el nº de cuenta"); n° only before a number, as ° is a degree too.
_NUMERO = re.compile(r"(?<!\w)(?:(№№|№|[nN]º)(?![^\W\d_])|[nN]°(?=\s*\d))")


def numero_signs(text: str, language: Optional[str]) -> str:
    """`text` with each numero sign (№ 5, Nº 5, n°5, el nº de cuenta, №№ 5 и 6) written as
    `language`'s word for it, before the cleaners' NFKC makes it "no"."""
    primary = (language or "").lower().split("-")[0]
    if primary not in NUMERO_WORDS:
        return text

    def word(match: re.Match) -> str:
        said = (NUMERO_PLURALS if match.group(1) == "№№" else NUMERO_WORDS)[primary]
        return said + (" " if match.string[match.end() : match.end() + 1].isdigit() else "")

    return _NUMERO.sub(word, text)


def abbreviation_reader(language: Optional[str]) -> Optional[Callable[[str], str]]:
    """What reads out the abbreviations of a text in `language` (an espeak-ng code), or None."""
    primary = (language or "").lower().split("-")[0]
    if primary not in _READERS:
        return None
    pattern, ordered = _READERS[primary]
    words = _WORDS[primary]

    def said(match: re.Match) -> str:
        if not match.lastindex:
            return match.group(0)
        # An abbreviation's full stop that ends the text ends its sentence too: "... and Main St."; so does
        # one of _MAY_END's before a word that starts sentences ("am hbf. dann gehen wir").
        word = words[ordered[match.lastindex - 1]]
        ends = ends_text(match) or (word in _MAY_END and _OPENS_SENTENCE.match(match.string, match.end()))
        return word + ("." if match.group(0).endswith(".") and ends else "")

    def read(text: str) -> str:
        if primary == "de":
            text = _GERMAN_STREET.sub("straße", text)
        return pattern.sub(said, text)

    return read


# "And so on": ends a list, and mostly its sentence.
_LIST_ENDS = frozenset(
    {
        "i tak dalej",
        "i tym podobne",
        "ve benzeri",
        "так далее",
        "тому подобное",
        "und so weiter",
        "etcétera",
        "eccetera",
        "och så vidare",
        "enzovoort",
    }
)
# Abbreviations of a noun that end sentences as often as not (read as these words): before a capital,
# their full stop is the sentence's too ("Wir treffen uns am Hbf. Dann gehen wir.", "inkl. MwSt. Versand
# extra.", "Bis Fr. Dann frei."); in the text read whole, before a word that starts sentences.
_MAY_END = (
    frozenset(
        "hauptbahnhof mehrwertsteuer jahrhundert montag dienstag mittwoch donnerstag freitag samstag sonntag".split()
    )
    | _LIST_ENDS
    | {"estados unidos"}
)
_OPENS_SENTENCE = re.compile(
    r"\s+(?:dann|danach|damals|dort|da|die|der|das|sie|er|es|wir|ich|du|man|heute|morgen|gestern|hier|jetzt|nun)\b"
)


def read_out_before(before: str, after: str, language: Optional[str]) -> bool:
    """Whether `before` ends with the full stop of an abbreviation `language`'s reader reads out,
    `after` following ("Call ext. | 12", "Sen. | Brown"): no sentence ends there."""
    primary = (language or "").lower().split("-")[0]
    if primary not in _READERS or not before.endswith("."):
        return False
    text, end = f"{before} {after}", len(before)
    pattern, ordered = _READERS[primary]
    # From a little before its end (the longest is "approx."), the whole text after it in sight: some
    # are read only before a number ("ext. 12").
    for match in pattern.finditer(text, max(0, end - 16)):
        if match.start() >= end:
            return False
        if match.end() >= end:  # ending there, or past it: "EE. | UU." is one abbreviation
            word = _WORDS[primary][ordered[match.lastindex - 1]] if match.lastindex else ""
            return not (match.end() == end and word in _MAY_END and after[:1].isupper())
    return False
