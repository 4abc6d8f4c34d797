"""A number before a noun in the noun's gender, through the cleaners and number reader a run uses."""

from __future__ import annotations

import pytest

from xtts_cli.data.text import prepare_texts


def _read(text: str, language: str) -> str:
    return prepare_texts([text], ["multilingual_cleaners"], "characters", language, numbers="words")[0]


@pytest.mark.parametrize(
    ("language", "text", "read"),
    [
        ("es", "Compré 1 mesa, 1 libro y 1 canción.", "compré una mesa, un libro y una canción."),
        ("es", "Vinieron 21 personas en 31 días.", "vinieron veintiuna personas en treinta y un días."),
        ("es", "Hay 200 personas y 300 libros.", "hay doscientas personas y trescientos libros."),
        ("es", "1 día, 1 problema, 1 mano y 1 vez", "un día, un problema, una mano y una vez"),
        ("es", "Fueron 21000 personas y 1 millón de votos.", "fueron veintiún mil personas y un millón de votos."),
        ("pt", "Comprei 1 mesa e 2 livros, 2 casas.", "comprei uma mesa e dois livros, duas casas."),
        (
            "pt",
            "Vieram 22 pessoas, 200 pessoas, 2000 pessoas.",
            "vieram vinte e duas pessoas, duzentas pessoas, duas mil pessoas.",
        ),
        ("it", "1 casa, 1 libro, 1 zio e 1 studente", "una casa, un libro, uno zio e uno studente"),
        ("fr", "1 maison, 1 livre, 21 pages et 1 heure", "une maison, un livre, vingt et une pages et une heure"),
        (
            "de",
            "1 Frau, 1 Mann, 1 Kind, 1 Stunde und 1 Kaffee",
            "eine frau, ein mann, ein kind, eine stunde und ein kaffee",
        ),
        ("de", "Um 1 Uhr, 1 Million", "um ein uhr, eine million"),
        # After a preposition that takes the dative: einem, einer.
        (
            "de",
            "Mit 1 Frau, seit 1 Jahr, vor 1 Woche, von 1 bis 5",
            "mit einer frau, seit einem jahr, vor einer woche, von eins bis fünf",
        ),
        (
            "ru",
            "1 кошка и 2 кошки, 1 стол и 2 стола, 1 окно, 21 книга, 22 книги, 2 дня, 2 и 3",
            "одна кошка и две кошки, один стол и два стола, одно окно, двадцать одна книга, двадцать две книги, "
            "два дня, два и три",
        ),
        # After one that takes the accusative: einen before a masculine noun, ein before a neuter one.
        (
            "de",
            "Für 1 Mann, um 1 Euro, ohne 1 Wort, für 1 Woche, durch 1 Mädchen, für 1 Kuchen, gegen 1 Uhr",
            "für einen mann, um einen euro, ohne ein wort, für eine woche, durch ein mädchen, für einen kuchen, "
            "gegen ein uhr",
        ),
        ("de", "Seit 1 Uhr, mit 1 Wagen", "seit ein uhr, mit einem wagen"),
        ("pl", "1 kot, 1 kobieta, 1 okno, 1 kolega", "jeden kot, jedna kobieta, jedno okno, jeden kolega"),
        (
            "pl",
            "2 osoby, 22 godziny, 2 wiadomości, 2 lekcje, 2 koty, 2 okna, 12 osób",
            "dwie osoby, dwadzieścia dwie godziny, dwie wiadomości, dwie lekcje, dwa koty, dwa okna, dwanaście osób",
        ),
        ("it", "1 ora, 1 amica, 1 isola e 1 amico", "un'ora, un'amica, un'isola e un amico"),
        (
            "sv",
            "1 bil och 1 hus, 1 kvinna, 1 år, 1 meddelande, 1 gång",
            "en bil och ett hus, en kvinna, ett år, ett meddelande, en gång",
        ),
    ],
)
def test_a_number_before_a_noun_takes_its_gender(language: str, text: str, read: str) -> None:
    assert _read(text, language) == read


@pytest.mark.parametrize(
    ("language", "text", "read"),
    [
        # A label's number, a count of its own, a number before a verb or a decimal keep num2words' form.
        (
            "es",
            "La página 1 y el capítulo 1 trata de 1 de ellos.",
            "la página uno y el capítulo uno trata de uno de ellos.",
        ),
        ("es", "Tengo 1 y 2, y 1,5 horas.", "tengo uno y dos, y uno coma cinco horas."),
        ("pt", "O capítulo 1 e a página 2", "o capítulo um e a página dois"),
        ("it", "Pagina 1 e capitolo 1", "pagina uno e capitolo uno"),
        (
            "de",
            "Kapitel 1 beginnt, 3:1 gewonnen, 1 und 2",
            "kapitel eins beginnt, drei zu eins gewonnen, eins und zwei",
        ),
        ("sv", "Kapitel 1, klockan 1, 1 och 2", "kapitel ett, klockan ett, ett och två"),
    ],
)
def test_a_number_that_counts_no_noun_keeps_its_own_form(language: str, text: str, read: str) -> None:
    assert _read(text, language) == read
