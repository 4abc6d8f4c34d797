"""Numbers read as words for the characters front end, and which vocabularies read them so."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from xtts_cli.data.numbers import _DEGREE_WORDS, number_reader
from xtts_cli.data.text import Tokenizer


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("it costs 1999 dollars", "it costs one thousand nine hundred and ninety nine dollars"),
        ("it costs $1,999.50.", "it costs one thousand nine hundred and ninety nine dollars and fifty cents."),
        ("£2 each", "two pounds each"),
        ("on the 3rd and the 21st", "on the third and the twenty first"),
        ("born in 1999, they grew 5%", "born in nineteen ninety nine, they grew five percent"),
        ("3.5 kilos for 1,000,000 people", "three point five kilos for one million people"),
        ("no digits here", "no digits here"),
        ("tea & biscuits, R&D", "tea and biscuits, R and D"),
        ("in the 1990s and the '80s", "in the nineteen nineties and the eighties"),
        ("at 9:05, 3:30 and 12:00", "at nine oh five, three thirty and twelve o clock"),
        ("at 7 p.m. on Monday, 7:05pm and 9 AM", "at seven p m on Monday, seven oh five p m and nine a m"),
        ("we left at 9 a.m.", "we left at nine a m."),
        ("$1.5 billion, $5 million", "one point five billion dollars, five million dollars"),
        ("version 2.0, -5 degrees", "version two point zero, minus five degrees"),
        # Dotted dates are day first; three hyphened numbers a code, not two ranges; 1.2.2024 after
        # "version" a version.
        ("on 1.5.2026 we met", "on the first of may, twenty twenty six we met"),
        ("version 1.2.2024", "version one point two point two thousand and twenty four"),
        (
            "Windows 6.1.7601, Kernel 5.10.2024",
            "Windows six point one point seven thousand six hundred and one, Kernel five point ten point two thousand and twenty four",
        ),
        ("open 1.5.2026 - 3.5.2026", "open the first of may, twenty twenty six to the third of may, twenty twenty six"),
        ("the 1990-1995-2000 waves", "the nineteen ninety to nineteen ninety five to two thousand waves"),
        ("ISBN 978-3-16-148410-0", "ISBN nine seven eight, three, sixteen, one four eight four one oh, oh"),
        ("due 12-25-2020", "due december twenty fifth, twenty twenty"),
        ("Born 14.07.1789 in Paris", "Born the fourteenth of july, seventeen eighty nine in Paris"),
        ("on 1.1.2020", "on the first of january, twenty twenty"),  # day first, said so (its day its month too)
        # After a word or sign that numbers, a number: "Figure 2.1.1900", "§ 1.2.3" (the sign had stayed unread).
        (
            "Figure 2.1.1900, § 1.2.3",
            "Figure two point one point one thousand nine hundred, section one point two point three",
        ),
        # Short groups, or a sign's, are no code: they read as before.
        (
            "See § 3-4-5, sizes 100-200-300",
            "See section three, four, five, sizes one hundred, two hundred, three hundred",
        ),
        # A series is said number by number, not as a range of three ends; years stay a range.
        ("Ready? 3-2-1, go! A 4-3-3 formation.", "Ready? three, two, one, go! A four, three, three formation."),
        # A word hyphened to its end is said after it ("three to two to one-go" had been said).
        ("Then 3-2-1-go!", "Then three, two, one, go!"),
        ("1-2-3-go", "one, two, three, go"),
        # A compound's word is said with its numbers, which read as they do alone (not as ranges).
        ("a 30-60-90-day plan", "a thirty, sixty, ninety day plan"),
        ("ISBN 978-0-306-40615-7-ebook", "ISBN nine seven eight, oh, three oh six, four oh six one five, seven ebook"),
        ("due 12-25-2020-style", "due december twenty fifth, twenty twenty style"),
        ("ISBN 0-306-40615-X", "ISBN oh, three oh six, four oh six one five, X"),
        # An ISBN-13 whose groups are short is a code all the same (it had been read as five numbers).
        ("ISBN 978-90-274-3964-2", "ISBN nine seven eight, ninety, two seven four, three nine six four, two"),
        ("In 1990-1995-2000.", "In nineteen ninety to nineteen ninety five to two thousand."),
        (
            "Card 4111-1111-1111-1111 declined.",
            "Card four one one one, one one one one, one one one one, one one one one declined.",
        ),
        # Its tail is no telephone number ("five thousand five hundred-oh oh oh oh, ..." had been said).
        ("Card 5500-0000-0000-0004.", "Card five five oh oh, oh oh oh oh, oh oh oh oh, oh oh oh four."),
        (
            "between 1.5.2026 - 3.5.2026",
            "between the first of may, twenty twenty six and the third of may, twenty twenty six",
        ),
        ("\u22125 °C, \u22123 at night", "minus five degrees celsius, minus three at night"),  # U+2212, typeset
        (
            "we met on 4-5 June, and 30\u201331 December",
            "we met on the fourth to the fifth of June, and the thirtieth to the thirty first of December",
        ),
        (
            "it costs 5 € or 9.99$, 1,200 £ a month",
            "it costs five euros or nine dollars and ninety nine cents, one thousand two hundred pounds a month",
        ),
        ("add 1/2 cup and 3/4 cup", "add half a cup and three quarters of a cup"),
        ("5km by MP3", "five kilometers by MP three"),
        # Units after a number, in the plural but for one.
        (
            "60 km/h, 1 km/h, 2.5 lbs, 6 ft, 1 ft, a 16gb card at 3.2 ghz",
            "sixty kilometers per hour, one kilometer per hour, two point five pounds, six feet, one foot, "
            "a sixteen gigabyte card at three point two gigahertz",
        ),
        # Before a number, a comparison; after one, a rate; squared and cubed units.
        (
            "~20 items, >50 users, <5 errors, >= 3 and \u2264 9; $25/person, 3/day, 24/7; 1,000 m\u00b2, 2 cm\u00b3",
            "about twenty items, more than fifty users, less than five errors, at least three and at most nine; "
            "twenty five dollars per person, three per day, twenty four seven; one thousand square meters, two "
            "cubic centimeters",
        ),
        # After "a" a measure describes a noun, in the singular.
        ("a 10 km run, an 8 oz cup; run 10 km", "a ten kilometer run, an eight ounce cup; run ten kilometers"),
        # A day and month after a word that dates; round counts in the plural; a range of money with one
        # sign; an era beside a year.
        (
            "on 12/31 and by 3/4, from 1/2 to 5/6; 1,000s of people and the 100s; $5-10, $3-4k and \u00a31.50; "
            "in 753 BC and A.D. 79",
            "on december thirty first and by march fourth, from a half to five sixths; thousands of "
            "people and the hundreds; five to ten dollars, three to four thousand dollars and one pound and fifty "
            "pence; in seven fifty three b c and a d seventy nine",
        ),
        # Meters and liters after a space (1.2m is a million); signs stuck to a percent or an amount;
        # a range of percents; the year of a plural event; feet and inches; a day range; weekdays.
        (
            "8,849 m tall, 2 l of milk; -3.5%, +5%, -$250, 5%-10%; the 2024 olympics and the 2000 people; "
            "5 ft 4 in tall, 6 in. of snow; june 3-5; open Mon-Fri",
            "eight thousand eight hundred and forty nine meters tall, two liters of milk; minus three point five "
            "percent, plus five percent, minus two hundred and fifty dollars, five percent to ten percent; the "
            "twenty twenty four olympics and the two thousand people; five foot four tall, six inches of snow; "
            "june third to fifth; open monday to friday",
        ),
        # A version and an address of numbers; 911 and 9/11; § and an eighth.
        (
            "version 2.3.1 at 192.168.1.1; call 911, the 9/11 attacks; \u00a7 1983 and 1/8 cup",
            "version two point three point one at one nine two dot one six eight dot one dot one; call nine one "
            "one, the nine eleven attacks; section nineteen eighty three and an eighth of a cup",
        ),
        # Imperial units.
        (
            "a 1,200 sq ft flat, 2 fl oz, 3 gal, 1 qt and 100 yd; 1 mi away",
            "a one thousand two hundred square foot flat, two fluid ounces, three gallons, one quart and one "
            "hundred yards; one mile away",
        ),
        # Thousands grouped by a space; money scaled by its abbreviation.
        ("we counted 100 000 birds", "we counted one hundred thousand birds"),
        ("\u00a31.5bn, $10k and $3M", "one point five billion pounds, ten thousand dollars and three million dollars"),
        # Dates: the day as an ordinal, the year as a year; "march" and "may" before a word are the verbs.
        (
            "born on 4 july 1976, on july 4, 1976 and in july 1976",
            "born on the fourth of july nineteen seventy six, on july fourth, nineteen seventy six and in july "
            "nineteen seventy six",
        ),
        ("we march 3 miles on march 3.", "we march three miles on march third."),
        # Ranges of years; dates in digits (day first where the month cannot be first, and in British English).
        (
            "between 1914 and 1918, from 1939-45, in 2010\u201311",
            "between nineteen fourteen and nineteen eighteen, from nineteen thirty nine to forty five, in twenty ten "
            "to eleven",
        ),
        (
            "on 12/25/2020 or 3/4/21",
            "on december twenty fifth, twenty twenty or march fourth, twenty one",
        ),
        # Fractions past quarters; pence and currency codes; a code with leading zeros digit by digit.
        ("5/8 inch, 1/10 of it", "five eighths inch, a tenth of it"),
        ("50p, 1p, 10 usd and 20 eur", "fifty pence, one penny, ten dollars and twenty euros"),
        ("agent 007, 0.5", "agent oh oh seven, zero point five"),
        # A recipe: grams (after a space), spoons, fractions of a unit, a range read with "to".
        (
            "add 250 g of flour, 1/2 tsp of salt, 1 1/2 tbsp of oil, 3/4 tsp of sugar; bake for 25-30 minutes",
            "add two hundred and fifty grams of flour, half a teaspoon of salt, one and a half tablespoons of oil, "
            "three quarters of a teaspoon of sugar; bake for twenty five to thirty minutes",
        ),
        (
            "it won 3-2; tickets cost £15-£20, from -5 to -3; 1939-45; a 5g phone",
            "it won three to two; tickets cost fifteen pounds to twenty pounds, from minus five to minus three; "
            "nineteen thirty nine to forty five; a five g phone",
        ),
        (
            "on 14 october 1066 and 1-800-273-8255",
            "on the fourteenth of october ten sixty six and one, eight oh oh, two seven three, eight two five five",
        ),
        # A year with no word before it, unless a count noun follows; round ranges are not telephone numbers.
        (
            "2024 was hot. the 1990 world cup, founded 1998 (2021 census); 1500 people, 1999 dollars",
            "twenty twenty four was hot. the nineteen ninety world cup, founded nineteen ninety eight (twenty twenty "
            "one census); one thousand five hundred people, one thousand nine hundred and ninety nine dollars",
        ),
        ("500-1000 words, 555-1230", "five hundred to one thousand words, five five five, one two three oh"),
        # British times with a dot, a range of them; short months; ratios, blood pressure, sayings; pence.
        (
            "at 9.30am, 9am-5pm, dec 25, in december 2 people died",
            "at nine thirty a m, nine a m to five p m, december twenty fifth, in december two people died",
        ),
        (
            "won 3:1, bp 140/90, open 24/7, 145.9p or $0.99",
            "won three to one, bp one hundred and forty over ninety, open twenty four seven, one hundred and forty five "
            "point nine pence or ninety nine cents",
        ),
        # A duration, and the symbols said as words.
        ("it took 2:30:15 or 0:45:00", "it took two hours, thirty minutes and fifteen seconds or forty five minutes"),
        (
            "item #1, no. 5, \u00b12%, 100+ users, 3x faster at 1920x1080",
            "item number one, number five, plus or minus two percent, one hundred plus users, three times faster "
            "at one thousand nine hundred and twenty by one thousand and eighty",
        ),
        # A plus sign before a number had been left out ("it went three"), +12.5 read as a telephone's digits.
        ("it went +3, +12.5 points, 2+2", "it went plus three, plus twelve point five points, two plus two"),
        ("30°C or 86 \u00b0F, 1\u00b0 off", "thirty degrees celsius or eighty six degrees fahrenheit, one degree off"),
        # A telephone number digit by digit, in its groups; a range of years is not one.
        (
            "call 555-1234 or (020) 7946 0958",
            "call five five five, one two three four or oh two oh, seven nine four six, oh nine five eight",
        ),
        (
            "+44 20 7946 0958, from 1999-2000",
            "plus four four, two oh, seven nine four six, oh nine five eight, from nineteen ninety nine to two thousand",
        ),
        # A scale before a count noun; a grouped ordinal; a short month before an ordinal day; yen, rupees; heights.
        ("about 3.5m people and 10k users", "about three point five million people and ten thousand users"),
        ("the 1,000,000th visitor on jan 1st, 2024", "the one millionth visitor on january first, twenty twenty four"),
        (
            "\u00a5500 and \u20b91,250.50",
            "five hundred yen and one thousand two hundred and fifty rupees and fifty paise",
        ),
        ("he is 6'2\" and she is 5'11", "he is six foot two and she is five foot eleven"),
        # A fraction after "a" says its own article; a score out of ten; foot and inch marks, not a quote's.
        ("add a 1/2 cup, an 1/8 inch gap, a 1/4 mile", "add half a cup, an eighth inch gap, a quarter mile"),
        ("1/2 a cup and 1/2 an hour", "half a cup and half an hour"),
        ("8/10, 10/10 and 9/10 of the votes", "eight out of ten, ten out of ten and nine tenths of the votes"),
        (
            'a 12" pizza, 6\' tall, 12" of snow, the "top 10" list',
            'a twelve inch pizza, six feet tall, twelve inches of snow, the "top ten" list',
        ),
        # A clock written with a dot after a word of time; aircraft said in pairs.
        (
            "at 9.30 tomorrow, doors at 19.00. open between 9.30 and 17.30; sold at 2.50 each",
            "at nine thirty tomorrow, doors at nineteen hundred. open between nine thirty and seventeen thirty; "
            "sold at two point five zero each",
        ),
        (
            "FY2024 and Win2000 on a 1080p screen, not 720i; rated 4.5/5, 3/5 stars, 1/5 of them",
            "FY twenty twenty four and Win two thousand on a ten eighty p screen, not seven twenty i; rated four point "
            "five out of five, three out of five stars, a fifth of them",
        ),
        (
            "10^6 cells, 2**10 bytes, x^2 + 3^3 and 1.5 × 10^-3 m",
            "ten to the power of six cells, two to the power of ten bytes, x squared plus three cubed and one point five "
            "times ten to the power of minus three m",
        ),
        # Thousands grouped by dots, a whole number over another, scientific notation: they had kept a
        # point per group ("one point two hundred..."), their slash, and their letter ("one e six").
        (
            "1.234.567 people, 1.000.000.000 stars, 1.234.567.890.123 in all, 10.0.0.1 here, version 2.0.1, pi is "
            "about 22/7, 4/3 of it, 1e6 times, 2.5E-3 of it, 0.5e+2",
            "one million two hundred and thirty four thousand five hundred and sixty seven people, one billion stars, "
            "one trillion two hundred and thirty four billion five hundred and sixty seven million eight hundred and "
            "ninety thousand one hundred and twenty three in all, one oh dot oh dot oh dot one here, version two point "
            "zero point one, pi is about twenty two over seven, four over three of it, one times ten to the power of "
            "six times, two point five times ten to the power of minus three of it, zero point five times ten "
            "squared",
        ),
        # A comma no thousands separator can be: a decimal comma, lakhs, a list (they had been "one five",
        # "three fourteen thousand...", "one twenty three four hundred...", "one two three").
        (
            "1,5 litres, 12,5 km, pi is 3,14159, 1,23,456 rupees, pick 1,2,3 or 1,000, in 1999,2000",
            "one point five litres, twelve point five kilometers, pi is three point one four one five nine, one "
            "hundred and twenty three thousand four hundred and fifty six rupees, pick one, two, three or one thousand, "
            "in one thousand nine hundred and ninety nine, two thousand",
        ),
        # An equation's dash is minus, its "=" is said; a sign after the currency is the amount's.
        (
            "so 5 - 3 = 2, 10/2=5, 3 \u00d7 4 = 12, 1,000 + 2,000 = 3,000, 3 - -2 = 5 and x = 5, y=2, not $-5",
            "so five minus three equals two, ten divided by two equals five, three times four equals twelve, one "
            "thousand plus two thousand equals three thousand, three minus minus two equals five and x equals five, "
            "y equals two, not minus five dollars",
        ),
        (
            "a boeing 747, a boeing 707 and an airbus a380",
            "a boeing seven forty seven, a boeing seven oh seven and an airbus a three eighty",
        ),
    ],
)
def test_english_numbers_currency_ordinals_and_years_read_as_words(text, read):
    reader = number_reader("en-us")
    assert reader is not None and reader(text) == read


def test_a_fraction_written_as_one_character_is_read_as_the_typed_one():
    from xtts_cli.data.text import prepare_texts

    text = "Add ½ cup, 1½ cups and ¾ cup."
    read = "add half a cup, one and a half cups and three quarters of a cup."
    for cleaners in (["english_cleaners"], ["multilingual_cleaners"], ["basic_cleaners"]):
        assert prepare_texts([text], cleaners, "characters", "en", "words") == [read], cleaners


def test_british_english_reads_a_date_in_digits_day_first():
    assert number_reader("en")("on 3/4/21 and 12/25/2020") == (
        "on the third of april, twenty one and december twenty fifth, twenty twenty"
    )
    assert number_reader("en")("on 2020-07-04") == "on the fourth of july, twenty twenty"
    assert number_reader("en-us")("on 2020-07-04") == "on july fourth, twenty twenty"
    # A "the" the text already says before the day is not said twice.
    for text, read in (
        ("It's the 12/03/2021.", "It's the twelfth of march, twenty twenty one."),
        ("Since the 4 July 1976.", "Since the fourth of July nineteen seventy six."),
        ("The 2020-07-04 release", "The fourth of july, twenty twenty release"),
        ("from the 3-5 May", "from the third to the fifth of May"),
        ("theme 4 July", "theme the fourth of July"),
    ):
        assert number_reader("en")(text) == read


@pytest.mark.parametrize(
    ("language", "text", "read"),
    [
        (
            "de",
            "~20 Leute, >50 Euro und <= 5 Fehler",
            "etwa zwanzig Leute, mehr als fünfzig Euro und höchstens fünf Fehler",
        ),
        ("fr", "~20 personnes, \u2265 3, <5", "environ vingt personnes, au moins trois, moins de cinq"),
        ("es", "~20 personas y <5 errores", "aproximadamente veinte personas y menos de cinco errores"),
        ("sv", "~20 personer, >= 2", "cirka tjugo personer, minst två"),
        # Russian declines the number after its word (около двадцати): the sign is left as it was.
        ("ru", "~20 человек", "~двадцать человек"),
    ],
)
def test_a_comparison_before_a_number_is_read_in_the_language(language, text, read):
    assert number_reader(language)(text) == read


def test_other_languages_read_through_num2words_or_not_at_all():
    german = number_reader("de")
    assert german is not None and german("ich habe 21 katzen") == "ich habe einundzwanzig katzen"
    isbn = "ISBN neunhundertachtundsiebzig-drei-sechzehn-eins vier acht vier eins null-null"  # a code's long group
    assert german("ISBN 978-3-16-148410-0") == isbn.replace("-", ", ")
    assert german("ISBN 3-16-148410-0") == "ISBN drei, sechzehn, eins vier acht vier eins null, null"  # no "bis"
    french = number_reader("fr")
    assert (
        french is not None
        and french("06-12-34-56-78") == "zéro six, douze, trente quatre, cinquante six, soixante dix huit"
    )
    assert number_reader("xx") is None and number_reader(None) is None


@pytest.mark.parametrize(
    ("language", "text", "read"),
    [
        # A decimal comma, thousands grouped by "." or a space (a no-break one in French typography).
        (
            "de",
            "es kostet 1.999 euro, 3,5 kilo",
            "es kostet eintausendneunhundertneunundneunzig euro, drei komma fünf kilo",
        ),
        ("fr", "1\u202f000 euros et 2 500,5", "mille euros et deux mille cinq cents virgule cinq"),
        ("ru", "1 999 рублей", "одна тысяча девятьсот девяносто девять рублей"),
        ("nl", "1.250,5 euro", "duizendtweehonderdvijftig komma vijf euro"),
        ("de", "3.5 kilo", "drei komma fünf kilo"),  # written as English does: not three thousand five hundred
        ("es-419", "2,500.5 pesos", "dos mil quinientos punto cinco pesos"),  # Latin American Spanish: a point
        ("de", "um 3,5 % und 7%", "um drei komma fünf prozent und sieben prozent"),
        ("fr", "10\u00a0%", "dix pour cent"),
        ("de", "am 3. mai und der 31. dezember", "am dritten mai und der einunddreißigste dezember"),
        ("de", "-5 Grad, 5km", "minus fünf Grad, fünf kilometer"),
        # Metric units as each language says them; Russian and Polish decline them with the number.
        ("de", "1 kg, 1,5 km bei 60 km/h", "ein kilogramm, eins komma fünf kilometer bei sechzig kilometer pro stunde"),
        (
            "fr",
            "1 kg, 1,5 km, 2 000 m, 500 g",
            "un kilogramme, un virgule cinq kilomètre, deux mille mètres, cinq cents grammes",
        ),
        ("es", "1 kg y 60 km/h", "un kilogramo y sesenta kilómetros por hora"),
        ("it", "5 kg", "cinque chilogrammi"),
        (
            "ru",
            "1 кг, 2 км, 11 м, 60 км/ч, 2020 г.",
            "один килограмм, два километра, одиннадцать метров, шестьдесят километров в час, две тысячи двадцатого года",
        ),
        ("pl", "5 kg, 2 km, 1,5 km", "pięć kilogramów, dwa kilometry, jeden przecinek pięć kilometra"),
        # Degrees: Russian and Polish decline the noun with the number.
        ("de", "-5 \u00b0C und 1 \u00b0C", "minus fünf grad celsius und ein grad celsius"),
        ("fr", "2,5 \u00b0C", "deux virgule cinq degrés celsius"),
        ("ru", "1 \u00b0C, 2\u00b0, 11\u00b0", "один градус по цельсию, два градуса, одиннадцать градусов"),
        ("pl", "3 \u00b0C, 5 \u00b0C", "trzy stopnie celsjusza, pięć stopni celsjusza"),
        # Russian ordinals end as their written ending says, and a year before "год" is one.
        (
            "ru",
            "5-го мая 2020 года, в 90-х, 3-я глава, в 5-м классе",
            "пятого мая две тысячи двадцатого года, в девяностых, третья глава, в пятом классе",
        ),
        ("ru", "в 1999 году, 1-е мая", "в тысяча девятьсот девяносто девятом году, первое мая"),
        # Russian's "%" takes the number's case; Turkish says it first.
        ("ru", "1 %, 3 %, 11 %, 21 %", "один процент, три процента, одиннадцать процентов, двадцать один процент"),
        ("tr", "%5 arttı", "yüzde beş arttı"),
        # Euros as each language says an amount.
        (
            "de",
            "es kostet 3,50 \u20ac, 1 \u20ac oder \u20ac2.500",
            "es kostet drei euro fünfzig, ein euro oder zweitausendfünfhundert euro",
        ),
        ("fr", "1 000 \u20ac et 3,50 \u20ac", "mille euros et trois euros cinquante"),
        ("es", "3,50 \u20ac", "tres euros con cincuenta"),
        # Dollars and pounds too (a feminine pound where the language has one); "$" is pesos in Latin
        # America, written with a decimal point.
        ("de", "5 $ und \u00a31", "fünf dollar und ein pfund"),
        ("fr", "1 \u00a3 et 2 \u00a3, 10 $", "une livre et deux livres, dix dollars"),
        ("it", "5 $ e 2,50 \u00a3", "cinque dollari e due sterline e cinquanta"),
        ("es", "1 \u00a3 y $20", "una libra y veinte dólares"),
        ("es-mx", "cuesta $3.50. O $1,200.", "cuesta tres pesos con cincuenta. O mil doscientos pesos."),
        # Russian and Polish decline the currency with the number (Polish: 1 alone takes the singular).
        (
            "ru",
            "3,50 \u20ac, 1 $, 2 $, 5 \u00a3, 21 $",
            "три евро пятьдесят, один доллар, два доллара, пять фунтов, двадцать один доллар",
        ),
        (
            "pl",
            "1 \u20ac, 2 $, 5 \u00a3, 21 $, 21 \u00b0C",
            "jedno euro, dwa dolary, pięć funtów, dwadzieścia jeden dolarów, dwadzieścia jeden stopni celsjusza",
        ),
        ("sv", "3,50 \u20ac och 1 \u00a3", "tre euro femtio och ett pund"),
        ("tr", "3,50 \u20ac ve 1 $", "üç avro elli ve bir dolar"),
        # Ordinals as each language marks them.
        ("fr", "le 1er mai, la 1re fois, la 2e", "le premier mai, la première fois, la deuxième"),
        ("es", "el 1º, la 2ª, el 1.er piso", "el primero, la segunda, el primer piso"),
        ("pt", "a 21ª vez", "a vigésima primeira vez"),
        ("nl", "de 2de en 8ste keer", "de tweede en achtste keer"),
        ("sv", "den 1:a och 3:e", "den första och tredje"),
        (
            "tr",
            "0,07 ve 1.250,5",
            "s\u0131f\u0131r virg\u00fcl s\u0131f\u0131r yedi ve bin iki y\u00fcz elli virg\u00fcl be\u015f",
        ),
        ("en", "a 1,999.5 tab", "a one thousand nine hundred and ninety nine point five tab"),
        # German, Dutch and Swedish read a year in hundreds where a word says it is one; a count stays.
        (
            "de",
            "am 3. oktober 1990, zwischen 1914 und 1918, von 1939-1945. 1990 menschen",
            "am dritten oktober neunzehnhundertneunzig, zwischen neunzehnhundertvierzehn und "
            "neunzehnhundertachtzehn, von neunzehnhundertneununddreißig bis neunzehnhundertfünfundvierzig. "
            "eintausendneunhundertneunzig menschen",
        ),
        (
            "de",
            "1999 war gut. im sommer 1999, ende 1989. vor 1200 menschen, am ende 1500 euro",
            "neunzehnhundertneunundneunzig war gut. im sommer neunzehnhundertneunundneunzig, ende "
            "neunzehnhundertneunundachtzig. vor eintausendzweihundert menschen, am ende eintausendfünfhundert euro",
        ),
        ("nl", "in 1990", "in negentienhonderdnegentig"),
        ("sv", "år 1905", "år nittonhundrafem"),
        # Dates in digits, day first or ISO's year first, read with the month's name as each language says a date.
        (
            "de",
            "am 03.10.1990, am 3.10. und 2020-07-14",
            "am dritten oktober neunzehnhundertneunzig, am dritten oktober und vierzehnte juli zweitausendzwanzig",
        ),
        (
            "fr",
            "le 14/07/1789 et le 01/05/2020",
            "le quatorze juillet mille sept cent quatre vingt neuf et le premier mai deux mille vingt",
        ),
        ("es", "el 14/07/2020", "el catorce de julio de dos mil veinte"),
        ("it", "il 01/07/2020", "il primo luglio duemilaventi"),
        (
            "ru",
            "14.07.2020 г. и 01.05.1999",
            "четырнадцатого июля две тысячи двадцатого года и первого мая тысяча девятьсот девяносто девятого года",
        ),
        ("nl", "op 14-07-2020", "op veertien juli tweeduizendtwintig"),
        # A range with the language's "to"; a number led by 0 (a telephone number) digit by digit in its groups.
        (
            "de",
            "10-15 minuten, 1,5-2 kg, tel. 030-1234567",
            "zehn bis fünfzehn minuten, eins komma fünf bis zwei kilogramm, tel. null drei null, eins zwei drei vier "
            "fünf sechs sieben",
        ),
        ("fr", "10-15 minutes, 3\u20134 jours", "dix à quinze minutes, trois à quatre jours"),
        ("nl", "10-15 minuten", "tien tot vijftien minuten"),
        # A time written with a dot, where a word says it is one (or in a range of two).
        (
            "de",
            "um 9.30 uhr, ab 20.15, 09.00-18.00, 3.5 kilo",
            "um neun uhr dreißig, ab zwanzig uhr fünfzehn, neun uhr bis achtzehn uhr, drei komma fünf kilo",
        ),
        ("nl", "om 20.45 uur", "om twintig uur vijfenveertig"),
        ("sv", "kl. 9.30", "kl. nio trettio"),
        ("pl", "godz. 14.15", "godz. czternasta piętnaście"),
        # An amount with cents before the currency's name; each country's own currency.
        ("de", "2,50 euro und 1,50 dollar", "zwei euro fünfzig und ein dollar fünfzig"),
        ("pl", "3,99 zł, 1 zł, 5 zł", "trzy złote dziewięćdziesiąt dziewięć, jeden złoty, pięć złotych"),
        ("sv", "29,90 kr", "tjugonio kronor nittio"),
        ("ru", "99,90 руб., 500 \u20bd", "девяносто девять рублей девяносто, пятьсот рублей"),
        ("pt", "r$ 45,90", "quarenta e cinco reais e noventa"),
        # German ordinals after an article or a preposition with one; Turkish ones before their noun.
        (
            "de",
            "im 3. stock, der 2. platz, das 1. mal, es ist der 12.",
            "im dritten stock, der zweite platz, das erste mal, es ist der zwölfte.",
        ),
        ("tr", "16. yüzyılda, 4. perondan", "on altıncı yüzyılda, dördüncü perondan"),
        # Russian, Polish and Swedish days before a month's name are ordinals (the Slavic ones genitive), and so
        # is a year before r. and г.
        (
            "ru",
            "12 апреля 1961 г., 1 апреля 2024 года",
            "двенадцатого апреля тысяча девятьсот шестьдесят первого года, первого апреля две тысячи двадцать "
            "четвёртого года",
        ),
        (
            "pl",
            "11 listopada 1918 r., w 1410 roku, 21 maja",
            "jedenastego listopada tysiąc dziewięćset osiemnastego roku, w tysiąc czterysta dziesiątym roku, "
            "dwudziestego pierwszego maja",
        ),
        ("sv", "den 1 januari 1990", "den första januari nittonhundranittio"),
        # A plus sign said (not a telephone number's, read digit by digit), a price's ",-" left out, a
        # German score, decades.
        (
            "de",
            "+3 °c, +49 30 1234567, 49,- €, 3:1 gewonnen, die 1990er",
            "plus drei grad celsius, plus vier neun, drei null, eins zwei drei vier fünf sechs sieben, neunundvierzig "
            "euro, drei zu eins gewonnen, die neunzehnhundertneunziger",
        ),
        ("sv", "på 1800-talet", "på artonhundratalet"),
        ("ru", "+3 °c", "плюс три градуса по цельсию"),
        # Turkish numbers as words apart, and their ordinals; Swedish ettusen; Italian ventitré; Spain's "coma".
        ("tr", "1923 ve 29", "bin dokuz yüz yirmi üç ve yirmi dokuz"),
        ("sv", "1000", "ettusen"),
        ("it", "2023", "duemilaventitré"),
        ("es", "2,5 %", "dos coma cinco por ciento"),
        ("es-419", "2.5 %", "dos punto cinco por ciento"),
        # A time of day as each language reads one; French and Portuguese also write 9h30 and 17 h.
        ("de", "um 9:30 uhr, um 1:00 uhr und 21:05", "um neun uhr dreißig, um ein uhr und einundzwanzig uhr fünf"),
        ("nl", "om 9:30 uur en 1:00", "om negen uur dertig en één uur"),
        (
            "fr",
            "de 9 h à 17 h 30, à 1h et 21:05",
            "de neuf heures à dix sept heures trente, à une heure et vingt et une heures cinq",
        ),
        ("pt", "às 9h30, à 1h e às 22:10", "às nove horas e trinta, à uma hora e às vinte e duas horas e dez"),
        ("es", "a las 9:30 y a la 1:05", "a las nueve y treinta y a la una y cinco"),
        ("it", "alle 9:30", "alle nove e trenta"),
        ("ru", "в 9:30, в 9:05 и в 9:00", "в девять тридцать, в девять ноль пять и в девять"),
        ("tr", "saat 9:05", "saat dokuz s\u0131f\u0131r be\u015f"),
        # h:mm:ss in the language's units, not its numbers with the colons between them
        ("de", "Es ist 10:30:15 Uhr.", "Es ist zehn uhr dreißig und fünfzehn sekunden."),
        ("de", "Zeit: 1:02:03.", "Zeit: eine stunde, zwei minuten und drei sekunden."),
        ("fr", "Le chrono indique 1:02:03.", "Le chrono indique une heure, deux minutes et trois secondes."),
        ("es", "en 0:30:00", "en treinta minutos"),
        ("ru", "за 1:02:03", "за один два три"),
        # a number only English writes (thousands by commas and a decimal point, or three groups)
        ("de", "Es kostet $1,500.50.", "Es kostet eintausendfünfhundert dollar fünfzig."),
        ("es", "Mide 1,500.50 metros.", "Mide mil quinientos coma cincuenta metros."),
        ("de", "Es waren 1,000,000 Leute.", "Es waren eine million Leute."),
        ("de", "Liste 1,2,3", "Liste eins zwei drei"),
        # a decimal of zeros keeps them (num2words reads 1.0 as "eins")
        ("de", "Es waren 1,000 Leute.", "Es waren eins komma null null null Leute."),
        ("fr", "1,0 point", "un virgule zéro point"),
        # Two decimals read as one number, as a time or a height is said; longer ones digit by digit.
        (
            "fr",
            "en 9,58 et 1,05, pi 3,14159",
            "en neuf virgule cinquante huit et un virgule zéro cinq, pi trois virgule un quatre un cinq neuf",
        ),
        ("it", "in 9,58", "in nove virgola cinquantotto"),
        ("pt", "em 1,75", "em um vírgula setenta e cinco"),
    ],
)
def test_each_language_reads_its_own_decimal_and_thousands_separators(language, text, read):
    reader = number_reader(language)
    assert reader is not None and reader(text) == read


@pytest.mark.parametrize("language", ["en", "de", "es", "fr", "it", "nl", "pl", "pt", "sv", "tr", "ru"])
def test_after_the_cleaners_no_digit_or_sign_is_left(language):
    # The cleaners lower the text before it is read: "30 °c", not "30 °C" ("thirty degreesc" before).
    from xtts_cli.data.text import prepare_texts

    text = "Am 03.10.1990 um 9:30: \u20ac5, 30 \u00b0C, 5 km, -5 und 21."
    said = prepare_texts([text], ["multilingual_cleaners"], "characters", language, "words")[0]
    assert not re.search(r"[\d\u00b0\u20ac]", said) and _DEGREE_WORDS[language][1] in said, said


@pytest.mark.parametrize(
    ("language", "text", "read"),
    [
        ("es", "El 1.º de mayo, la 3.ª planta, de 3 a 5.", "el primero de mayo, la tercera planta, de tres a cinco."),
        ("pt", "O 3.º andar, a 1ª vez.", "o terceiro andar, a primeira vez."),
        ("it", "Il 3º piano.", "il terzo piano."),
    ],
)
def test_ordinals_are_read_after_the_cleaners_made_their_marks_letters(language, text, read):
    # multilingual_cleaners' NFKC turns º and ª into o and a before the numbers are read.
    from xtts_cli.data.text import prepare_texts

    assert prepare_texts([text], ["multilingual_cleaners"], "characters", language, "words") == [read]


@pytest.mark.parametrize("language", ["es", "it", "ru", "pt", "pl", "en", "hu", "fa"])
def test_a_number_past_the_languages_largest_name_is_read_digit_by_digit(language):
    # num2words raises for these (OverflowError in Spanish, KeyError in Russian, NotImplementedError in Italian,
    # RecursionError for a Hungarian decimal); a float of more than 15 digits would be read as another number.
    from xtts_cli.data.text import prepare_texts

    huge = "1" + "0" * 70 + "5"
    said = prepare_texts([f"a {huge} b, 1.000 r."], ["multilingual_cleaners"], "characters", language, "words")[0]
    assert not re.search(r"\d", said) and said.startswith("a ") and " b, " in said, said
    decimal = "1" + "0" * 20 + ".5"
    said = prepare_texts([f"a {decimal} b"], ["multilingual_cleaners"], "characters", language, "words")[0]
    assert not re.search(r"\d", said) and said.startswith("a ") and said.endswith(" b"), said


def test_numbers_read_as_words_are_in_the_letters_of_the_languages_vocabulary():
    from xtts_cli.data.text import alphabet_of

    cleaners = ["multilingual_cleaners"]
    german = Tokenizer.build(
        ["ein test., ", "".join(alphabet_of(["de"], cleaners))], cleaners, languages=["de"], numbers="words"
    )
    said = german.prepare("Es kostet 3,5 Euro und 2000000 Katzen.")
    assert said == "es kostet drei komma fünf euro und zwei millionen katzen."
    assert len(german.symbol_ids(said)) == len(said)  # no letter the vocabulary lacks ("Komma", "Millionen")


def test_a_new_vocabulary_reads_numbers_as_words_and_one_saved_before_keeps_its_digits(tmp_path):
    new = Tokenizer.build(["the cat"], ["multilingual_cleaners"], languages=["en"], numbers="words")
    assert new.prepare("we bought 3 loaves") == "we bought three loaves"
    new.save(tmp_path / "vocab.json")
    assert Tokenizer.load(tmp_path / "vocab.json").numbers == "words"
    before = Path(__file__).parent / "data" / "run_before_run_data" / "vocab.json"
    saved = json.loads(before.read_text("utf-8"))
    assert "numbers" not in saved and not any(c.isdigit() for c in saved["characters"])
    # A run from before that never saw a digit cannot read one as itself: it reads it as words.
    never = Tokenizer.load(before)
    assert never.numbers == "words" and never.prepare("we bought 3 loaves") == "we bought three loaves"
    # One that trained on digits as characters keeps reading them so, and so does a run grown from it.
    saved["characters"] = sorted(saved["characters"] + list("0123456789"))
    (tmp_path / "digits.json").write_text(json.dumps(saved), "utf-8")
    old = Tokenizer.load(tmp_path / "digits.json")
    assert old.numbers == "characters" and old.prepare("we bought 3 loaves") == "we bought 3 loaves"
    assert old.grown(new).numbers == "characters"  # a run grown from it reads as its base learnt
    persian = Tokenizer([], ["multilingual_cleaners"], frontend="characters", numbers="words")
    assert persian.prepare("room 101", "fa") != "room 101"  # Persian's own reader reads digits too


@pytest.mark.parametrize(
    ("language", "text", "read"),
    [
        (
            "de",
            "Ca. 5 Euro, z. B. in der Hauptstr. 5 bzw. Nr. 7",
            "circa fünf euro, zum beispiel in der hauptstraße fünf beziehungsweise nummer sieben",
        ),
        ("fr", "Le Dr. Martin et M. Dupont, Mme Roux", "le docteur martin et monsieur dupont, madame roux"),
        ("es", "La Sra. López y Ud., pág. 5", "la señora lópez y usted, página cinco"),
        (
            "de",
            "Es kostet 5 Mio. Euro, 1 Mio. Euro und 1 Std. später.",
            "es kostet fünf millionen euro, eine million euro und eine stunde später.",
        ),
        (
            "sv",
            "Vi ses kl. 9.30, t.ex. i morgon, 2 dl och 1 kg.",
            "vi ses klockan nio trettio, till exempel i morgon, två deciliter och ett kilo.",
        ),
        # Addresses as they are said, the scheme left out.
        (
            "en",
            "See https://www.example.com/get-started. Mail jo.doe@mail.example.org or python.org.",
            "see w w w dot example dot com slash get dash started. mail jo dot doe at mail dot example dot org "
            "or python dot org.",
        ),
        # A query and a port are said too, not left out as symbols the run never saw.
        (
            "en",
            "Open https://example.com/docs?id=5#top or example.com:8080/x.",
            "open example dot com slash docs question mark id equals five hash top or example dot com colon eight "
            "thousand and eighty slash x.",
        ),
        (
            "en",
            "Fruit, e.g. apples, i.e. red ones, etc. vs. pears: approx. 5 min, Mr. Smith and Ms. Jones",
            "fruit, for example apples, that is red ones, et cetera versus pears: approximately five minutes, "
            "mister smith and miz jones",
        ),
        ("en", "On Monday, Jan. 15th.", "on monday, january fifteenth."),
        ("en", "Nos. 3 and 4", "numbers three and four"),
        ("en", "Open Mon-Fri and Tues-Sat", "open monday to friday and tuesday to saturday"),
        (
            "en",
            "Sen. Smith, Gov. Lee, Pres. Adams Sr. of Apt. 4, ext. 12, c. 1250, Mon. to Fri., Mr Brown and Mrs Green",
            "senator smith, governor lee, president adams senior of apartment four, extension twelve, circa twelve "
            "fifty, monday to friday, mister brown and missus green",
        ),
        (
            "en",
            "It was 1 Jan 2024, 2,000 sq ft.",
            "it was the first of january twenty twenty four, two thousand square feet.",
        ),
        ("en", "It costs US$50 or C$20.", "it costs u s fifty dollars or c twenty dollars."),
        # Pages, chapters, figures and volumes in each language; a German initial "S." stays.
        (
            "de",
            "Siehe S. 12, Kap. 3, Abb. 4, Tab. 2 und Bd. 3; S. Müller kam.",
            "siehe seite zwölf, kapitel drei, abbildung vier, tabelle zwei und band drei; s. müller kam.",
        ),
        ("fr", "Voir p. 12, chap. 3, fig. 2, vol. 4.", "voir page douze, chapitre trois, figure deux, volume quatre."),
        ("es", "Ver cap. 3, fig. 2, vol. 4 y p. 9.", "ver capítulo tres, figura dos, volumen cuatro y página nueve."),
        ("it", "Vedi p. 12 e cap. 3.", "vedi pagina dodici e capitolo tre."),
        ("nl", "Zie blz. 12 en hfst. 3.", "zie bladzijde twaalf en hoofdstuk drie."),
        ("sv", "Se s. 12 och kap. 3.", "se sidan tolv och kapitel tre."),
        # Pages and chapters before their number; a letter "p." before a word stays.
        (
            "en",
            "See p. 4, ch. 12, pp. 100-110, Eq. 3, Eqs. 4-5 and Sec. 2; the letter p. came after 30 sec.",
            "see page four, chapter twelve, pages one hundred to one hundred and ten, equation three, equations "
            "four to five and section two; the letter p. came after thirty seconds.",
        ),
        # A telephone number after its word, digit by digit in its groups (French in pairs).
        (
            "es",
            "Tel. 912 345 678, no 912 345 678 euros",
            "teléfono nueve uno dos, tres cuatro cinco, seis siete ocho, no novecientos doce millones trescientos "
            "cuarenta y cinco mil seiscientos setenta y ocho euros",
        ),
        (
            "fr",
            "Tél. 01 23 45 67 89",
            "téléphone zéro un, vingt trois, quarante cinq, soixante sept, quatre vingt neuf",
        ),
        (
            "it",
            "Sig.ra Rossi, tel. 06 1234 5678",
            "signora rossi, telefono zero sei, uno due tre quattro, cinque sei sette otto",
        ),
        ("pt", "Sr. Silva, tel. 21 123 4567", "senhor silva, telefone dois um, um dois três, quatro cinco seis sete"),
        # A Russian number dialled at home, after its word or not: it had been "восемь миллионов девятьсот ...".
        (
            "ru",
            "Тел. 8 912 345-67-89, звоните 8 (495) 123-45-67, а не 8 500 рублей.",
            "телефон восемь, девять один два, три четыре пять, шесть семь, восемь девять, звоните восемь, четыре девять "
            "пять, один два три, четыре пять, шесть семь, а не восемь тысяч пятьсот рублей.",
        ),
        # "телефона" (of a telephone) is no cue: its price is a price.
        ("ru", "Цена телефона: 150 000 рублей.", "цена телефона: сто пятьдесят тысяч рублей."),
        (
            "ru",
            "Звоните по телефону 123 456 789.",
            "звоните по телефону один два три, четыре пять шесть, семь восемь девять.",
        ),
        ("nl", "Dhr. Jansen, bijv. om 9:30 uur", "de heer jansen, bijvoorbeeld om negen uur dertig"),
        # Halves and quarters; the multiplication sign; a year after a verb of a life, or before a participle.
        (
            "de",
            "1/2 Liter, 3/4 Stunde, 2 x täglich, 3 x 4; er kam 1998 nach Berlin, 1950 geboren, Abs. 3",
            "einhalb liter, drei viertel stunde, zwei mal täglich, drei mal vier; er kam neunzehnhundertachtundneunzig "
            "nach berlin, neunzehnhundertfünfzig geboren, absatz drei",
        ),
        ("fr", "1/2 litre, 3 x 4", "un demi litre, trois fois quatre"),
        ("es", "1/2 kilo y 3/4 de hora", "medio kilo y tres cuartos de hora"),
        # A whole number and a fraction, typed or as one character (NFKC would make "3½" 31⁄2).
        (
            "de",
            "1 1/2 Stunden, 3½ Liter, 2 ¾ Tassen",
            "eineinhalb stunden, dreieinhalb liter, zwei und drei viertel tassen",
        ),
        ("fr", "3 1/2 litres, ½ litre", "trois et demi litres, un demi litre"),
        ("es", "2½ kilos, 1 1/4 horas", "dos y medio kilos, uno y un cuarto horas"),
        ("sv", "född 1998", "född nittonhundranittioåtta"),
        # Polish hours: a feminine ordinal, in the genitive or locative after o, od, do.
        (
            "pl",
            "Spotkanie o 10:30, od 9:00 do 17:00; jest 21:15, godz. 14.15, np. ul. Długa nr 5",
            "spotkanie o dziesiątej trzydzieści, od dziewiątej do siedemnastej; jest dwudziesta pierwsza piętnaście, "
            "godzina czternasta piętnaście, na przykład ulica długa numer pięć",
        ),
        # A degree sign typed for the ordinal's mark, before a month or a floor; a temperature stays one.
        ("it", "Il 1° maggio, il 2° piano, 30° all'ombra", "il primo maggio, il secondo piano, trenta gradi all'ombra"),
        ("es", "El 1° de mayo, 30° de temperatura", "el primero de mayo, treinta grados de temperatura"),
        # A German ordinal after any word declined as an article, with its ending; thousands in it.
        (
            "de",
            "Jeder 5. Deutsche, sein 2. Versuch, sein 2. Mädchen, seinen 100. Geburtstag, zum 1000. Mal, der 1.000. "
            "Kunde, unsere 2. Tochter",
            "jeder fünfte deutsche, sein zweiter versuch, sein zweites mädchen, seinen hundertsten geburtstag, zum "
            "tausendsten mal, der tausendste kunde, unsere zweite tochter",
        ),
        # An amount under one in its hundredths; a score before a preposition; a date that ends the text.
        (
            "de",
            "Das kostet 0,99 € oder 0,01 €. Es endete 3:1 nach Verlängerung, 1:1 bei Regen. Er kommt am 7.7.",
            "das kostet neunundneunzig cent oder ein cent. es endete drei zu eins nach verlängerung, eins zu eins "
            "bei regen. er kommt am siebten juli.",
        ),
        ("es", "0,99 € y 0,50 €", "noventa y nueve céntimos y cincuenta céntimos"),
        ("fr", "0,99 €", "quatre vingt dix neuf centimes"),
        ("sv", "0,50 kr", "femtio öre"),
        # German weekdays before a date or a dash, and common abbreviations.
        (
            "de",
            "Am Sa., 4. Mai kommt Fr. Müller. Geöffnet Mo.-Fr., im 19. Jh., 25 J. alt, Hbf., inkl. MwSt.",
            "am samstag, vierten mai kommt frau müller. geöffnet montag-freitag, im neunzehnten jahrhundert, "
            "fünfundzwanzig jahre alt, hauptbahnhof, inklusive mehrwertsteuer.",
        ),
        ("de", "Das ist so. Bis Fr. Dann frei.", "das ist so. bis freitag. dann frei."),
        # ... and what stays: "so." (Ach so. 2 Tage), a count before a word that is no noun, a decimal that
        # is no date, an initial before the name Alt.
        (
            "de",
            "Ach so. 2 Tage noch. Er gab ihr 5. Dann ging er. Ich kaufte diese 3. Die anderen nicht. Es ist 12.30.",
            "ach so. zwei tage noch. er gab ihr fünf. dann ging er. ich kaufte diese drei. die anderen nicht. es ist "
            "zwölf komma drei.",
        ),
        (
            "de",
            "Peter J. Alt kam Mo. bis Fr., Mo.-Fr. und Sa., So. zum Hbf. Dann ging er. Sein 2. Buch, ihr 3. Kind.",
            "peter j. alt kam montag bis freitag, montag-freitag und samstag, sonntag zum hauptbahnhof. dann ging er. "
            "sein zweites buch, ihr drittes kind.",
        ),
        # Each language's common abbreviations: addresses, references, titles.
        ("ru", "ул. Ленина, д. 12, кв. 5, г. Москва", "улица ленина, дом двенадцать, квартира пять, город москва"),
        (
            "ru",
            "см. с. 45, т. е. ок. 200; длина 5 см.",
            "смотри страница сорок пять, то есть около двести; длина пять сантиметров.",
        ),
        (
            "tr",
            "Prof. Dr. Ahmet, Atatürk Cad. No: 5, bkz. s. 12 vb.",
            "profesör doktor ahmet, atatürk caddesi numara beş, bakınız sayfa on iki ve benzeri.",
        ),
        (
            "pl",
            "Prof. Nowak, ok. 200 osób, zob. s. 45, ul. Długa 5 m. 12, itd.",
            "profesor nowak, około dwieście osób, zobacz strona czterdzieści pięć, ulica długa pięć mieszkanie "
            "dwanaście, i tak dalej.",
        ),
        (
            "pt",
            "p. ex. o n.º 12, 3.º Esq., apto. 5, Profa. Ana",
            "por exemplo o número doze, terceiro esquerdo, apartamento cinco, professora ana",
        ),
        ("es", "El n.º 12 de la C/ Mayor, en EE. UU.", "el número doce de la calle mayor, en estados unidos."),
        ("it", "ad es. int. 5, n. 12", "ad esempio interno cinque, numero dodici"),
        ("nl", "Dr. Bakker, d.w.z. o.a. morgen", "doctor bakker, dat wil zeggen onder andere morgen"),
        # ... and what they leave: initials (Г. К. Жуков), a unit after a number (8 m. 20 cm), versus, a
        # degree before a word that is no count; a list's end keeps its stop.
        (
            "ru",
            "Маршал Г. К. Жуков, в г. Туле. Г. Петров купил сыр и т. д., а потом ушёл. Сыр и т. д.",
            "маршал г. к. жуков, в город туле. г. петров купил сыр и так далее, а потом ушёл. сыр и так далее.",
        ),
        (
            "pl",
            "Skoczył 8 m. 20 cm, ul. Długa 5 m. 12",
            "skoczył osiem metrów. dwadzieścia centymetrów, ulica długa pięć mieszkanie dwanaście",
        ),
        ("tr", "Galatasaray vs. Fenerbahçe", "galatasaray vs. fenerbahçe"),
        ("it", "Oggi 18° tempo nuvoloso.", "oggi diciotto gradi tempo nuvoloso."),
        (
            "es",
            "El 1.º se llevó el premio y el 1.º fue Pedro.",
            "el primero se llevó el premio y el primero fue pedro.",
        ),
        # German: a day's ordinal before und, oder, bis; the second of a pair; Fr. as Frau, Freitag or francs.
        (
            "de",
            "Am 24. und 25. Dezember, die 1. und 2. Klasse. Wir sehen uns am 5. Dann gehen wir.",
            "am vierundzwanzigsten und fünfundzwanzigsten dezember, die erste und zweite klasse. wir sehen uns am "
            "fünften. dann gehen wir.",
        ),
        (
            "de",
            "Herr und Fr. Meier zahlen 20 Fr. pro Person, Mo.-Fr., Mo. bis Fr. und Do. oder Fr., Äpfel usw. für alle.",
            "herr und frau meier zahlen zwanzig franken pro person, montag-freitag, montag bis freitag und donnerstag "
            "oder freitag, äpfel und so weiter für alle.",
        ),
        ("sv", "ca 200, dvs. fig. 3", "cirka tvåhundra, det vill säga figur tre"),
        # Halves, thirds and quarters in Polish, Russian and Turkish.
        ("pl", "1/2 litra i 3/4 szklanki", "pół litra i trzy czwarte szklanki"),
        ("ru", "1/2 стакана, 2 1/2 часа", "половина стакана, два с половиной часа"),
        ("tr", "1/2 litre, 1 1/2 saat", "yarım litre, bir buçuk saat"),
        # A time a case ending or a verb of travel says is one; an ordinal's degree sign before its noun.
        ("tr", "Tren 7.05'te kalkıyor.", "tren yedi sıfır beş'te kalkıyor."),
        ("sv", "Tåget kommer fram 13.45.", "tåget kommer fram tretton förtiofem."),
        ("it", "nel 1° trimestre, 30° all'ombra", "nel primo trimestre, trenta gradi all'ombra"),
        # Spanish primer and tercer before the masculine noun they count.
        (
            "es",
            "el 1.º piso, el 1.º de mayo, el 2.º piso, el 13.º piso, quedó 3.º.",
            "el primer piso, el primero de mayo, el segundo piso, el décimo tercer piso, quedó tercero.",
        ),
        # German: der's, dem's and den's ordinal at the text's end, a day after bis, the first of a span of days.
        (
            "de",
            "Heute ist der 12.",
            "heute ist der zwölfte.",
        ),
        ("de", "Seit dem 3.", "seit dem dritten."),
        ("de", "Ich nehme die 12.", "ich nehme die zwölf."),
        (
            "de",
            "Es gilt bis 31. Dezember, geöffnet 1. bis 3. Mai und vom 1. bis zum 5. Juni.",
            "es gilt bis einunddreißigsten dezember, geöffnet ersten bis dritten mai und vom ersten bis zum fünften juni.",
        ),
        # ... but der after an article-like word, den and dem before the text's end, count: "einer der 12."; a span
        # after der takes its ending (it had become der ersten bis dritten).
        (
            "de",
            "Der 1. bis 3. Mai ist frei, er war einer der 12.",
            "der erste bis dritte mai ist frei, er war einer der zwölf.",
        ),
        ("de", "Jesus sprach mit den 12.", "jesus sprach mit den zwölf."),
        # English numbers with a typographer's marks read as with a typewriter's (the mark had stayed: "'nineties").
        (
            "en",
            "The ’90s and the 1990’s, 6′2″ tall, the summer of ’69 and the class of ’05.",
            "the nineties and the nineteen nineties, six foot two tall, the summer of sixty nine and the class of oh five.",
        ),
        ("ru", "Дома №№ 5 и 6.", "дома номера пять и шесть."),
        # espeak-ng's Norwegian (nb) and Kazakh (kk), which num2words calls no and kz: their digits had stayed digits.
        ("nb", "Han betalte 25 kroner klokka 14:30.", "han betalte tjuefem kroner klokka fjorten tretti."),
        ("kk", "Мен 25 жастамын.", "мен жиырма бес жастамын."),
        # Ordinals written as a number and a full stop, before a word in lower case: no sentence ends there.
        (
            "pl",
            "To był 2. rok, w 1999. roku.",
            "to był drugi rok, w tysiąc dziewięćset dziewięćdziesiątym dziewiątym roku.",
        ),
        (
            "da",
            "Han kom på 2. pladsen den 1. maj. Det var 5. Så gik vi.",
            "han kom på anden pladsen den første maj. det var fem. så gik vi.",
        ),
        ("nb", "Han kom på 2. plass 17. mai.", "han kom på andre plass syttende mai."),
        ("hu", "A 2. helyen végzett 2024. májusban.", "a második helyen végzett kétezer huszonnégy májusban."),
        # ... but a count whose sentence ended, typed on in lower case, a Polish day before its month (the date's
        # reader's), Danish from the 30th (num2words': "tredivete"), Norwegian 13th, Hungarian days of a month.
        ("pl", "Mam 5. ty też? Było 1. maja.", "mam pięć. ty też? było pierwszego maja."),
        # The first of a pair is one whatever the conjunction; a Slovene day before its month is genitive.
        ("nb", "Elever i 1. og 2. klasse.", "elever i første og andre klasse."),
        ("da", "Den 3. og 4. december kl. 8.", "den tredje og fjerde december klokken otte."),
        ("sl", "1. maja je praznik, 15. avgusta.", "prvega maja je praznik, petnajstega avgusta."),
        (
            "da",
            "Hun fylder 31. december. Jeg har 3. de andre har flere.",
            "hun fylder enogtredivte december. jeg har tre. de andre har flere.",
        ),
        (
            "nb",
            "Vi sees 13. juni kl. 14.30, ca. 5 og 50 %.",
            "vi sees trettende juni klokka fjorten tretti, cirka fem og femti prosent.",
        ),
        ("hu", "Március 15. nemzeti ünnep, május 1. volt.", "március tizenötödike nemzeti ünnep, május elseje volt."),
        # ... no year where a quote closes or a sign follows; a span's first day only where spans start.
        (
            "en",
            "Prices rose '50%', he said '12' twice in '00, a 6’ fence, 5’ 4” tall.",
            "prices rose 'fifty percent', he said 'twelve' twice in oh oh, a six foot fence, five foot four tall.",
        ),
        (
            "de",
            "Lies Kapitel 3. Bis 15. Mai. Das war 2023. Bis 31. März. Ferien: 1. bis 3. Mai.",
            "lies kapitel drei. bis fünfzehnten mai. das war zweitausenddreiundzwanzig. bis einunddreißigsten märz. "
            "ferien: ersten bis dritten mai.",
        ),
        # A weekday's, a letter's and "haben wir"'s date at the text's end.
        ("de", "Wir treffen uns am Freitag, den 13.", "wir treffen uns am freitag, den dreizehnten."),
        ("de", "Berlin, den 5.", "berlin, den fünften."),
        ("de", "Morgen ist Montag, der 12.", "morgen ist montag, der zwölfte."),
        ("de", "Heute haben wir den 1.", "heute haben wir den ersten."),
        # The numero sign, which NFKC makes "no": its word, and n° only before a number (° is a degree too).
        ("ru", "Дом № 5, дом №6.", "дом номер пять, дом номер шесть."),
        (
            "es",
            "Vive en el Nº 5, el n°6 y el nº de cuenta; hace 5°.",
            "vive en el número cinco, el número seis y el número de cuenta; hace cinco grados.",
        ),
        ("pt", "Mora no nº 12, no 2º andar.", "mora no número doze, no segundo andar."),
        ("en", "Room № 5. No, 5 was not.", "room number five. no, five was not."),
        # Hungarian's day with its case ending after a hyphen; Norwegian and Danish years in hundreds.
        ("hu", "Március 15-én és 16-án.", "március tizenötödikén és tizenhatodikán."),
        (
            "hu",
            "Május 1-jétől 3-áig zárva, október 22-e ünnep.",
            "május elsejétől harmadikáig zárva, október huszonkettedike ünnep.",
        ),
        ("nb", "Grunnloven ble vedtatt 17. mai 1814.", "grunnloven ble vedtatt syttende mai attenhundreogfjorten."),
        (
            "nb",
            "Han døde i 1905, 80 år gammel; vi var 1500 personer.",
            "han døde i nittenhundreogfem, åtti år gammel; vi var en tusen fem hundre personer.",
        ),
        ("da", "Han døde i 1987.", "han døde i nittenhundrede og syvogfirs."),
        ("nb", "Klokka er 5.30.", "klokka er fem tretti."),
        ("sv", "Hon föddes 1987.", "hon föddes nittonhundraåttiosju."),
        # ... with every case ending, in lists, after a month shortened; a number not a day stays one.
        (
            "hu",
            "Június 10-ig, április 5-től, július 4-re.",
            "június tizedikéig, április ötödikétől, július negyedikére.",
        ),
        ("hu", "A március 15-i ünnepség, május 1-ától.", "a március tizenötödikei ünnepség, május elsejétől."),
        ("hu", "Március 15-én, 16-án és 17-én.", "március tizenötödikén, tizenhatodikán és tizenhetedikén."),
        ("hu", "Márc. 15-én, aug. 20. volt.", "március tizenötödikén, augusztus huszadika volt."),
        ("hu", "Március 99-én 5-en jöttek.", "március kilencvenkilenc-én öt-en jöttek."),
        # A count after a word that may begin either stays one: its noun follows it.
        (
            "sv",
            "Det föddes 1200 barn. Sedan 1995 bor hon här.",
            "det föddes ettusen tvåhundra barn. sedan nittonhundranittiofem bor hon här.",
        ),
        (
            "nb",
            "Etter 1500 forsøk, i 1650 tonn, fra 1500 til 2000 personer.",
            "etter en tusen fem hundre forsøk, i en tusen seks hundre og femti tonn, fra en tusen fem hundre til to tusen personer.",
        ),
        (
            "nb",
            "Fra 1939 til 1945 var det krig; født i 1950 og død 2010.",
            "fra nittenhundreogtrettini til nittenhundreogførtifem var det krig; født i nittenhundreogfemti og død to tusen og ti.",
        ),
        (
            "da",
            "Der blev bygget 1200 boliger. I 1864 blev Danmark mindre.",
            "der blev bygget ettusinde og tohundrede boliger. i attenhundrede og fireogtreds blev danmark mindre.",
        ),
        (
            "nb",
            "Rundt 1987 ansatte, i 1234 av tilfellene.",
            "rundt en tusen ni hundre og åttisyv ansatte, i en tusen to hundre og trettifire av tilfellene.",
        ),
        (
            "hu",
            "Március 15-én 8-tól 12-ig, május 1-jén, 5-en.",
            "március tizenötödikén nyolc-tól tizenkettő-ig, május elsején, öt-en.",
        ),
        ("sv", "I 1500 år har kyrkan stått.", "i femtonhundra år har kyrkan stått."),
        ("nb", "I fjor døde 1400 i trafikken.", "i fjor døde en tusen fire hundre i trafikken."),
    ],
)
def test_abbreviations_are_read_out_with_the_numbers(language, text, read):
    from xtts_cli.data.text import prepare_texts

    assert prepare_texts([text], ["multilingual_cleaners"], "characters", language, "words") == [read]


def test_the_phonemes_front_end_reads_numbers_as_words_unless_its_vocabulary_left_them_to_espeak() -> None:
    # espeak-ng reads a lowered "$1,999.50" as "dollar one thousand ... point five zero" and "12/25" with a slash.
    from xtts_cli.data.phonemes import phonemize
    from xtts_cli.data.text import prepare_texts

    text, said = "It costs $1,999.50 on 12/25/2020.", "it costs one thousand nine hundred and ninety nine dollars"
    said += " and fifty cents on december twenty fifth, twenty twenty."
    assert prepare_texts([text], ["english_cleaners"], "phonemes", "en-us", numbers="words") == phonemize(
        [said], "en-us"
    )
    # A phonemes run saved before: its digits as espeak-ng read them in training.
    assert prepare_texts([text], ["english_cleaners"], "phonemes", "en-us", numbers="characters") == phonemize(
        [text.lower()], "en-us"
    )
    german = prepare_texts(["Um 9.30 Uhr, 1 Frau."], ["multilingual_cleaners"], "phonemes", "de", numbers="words")
    assert german == phonemize(["um neun uhr dreißig, eine frau."], "de")


def test_a_phonemes_vocabulary_saved_before_leaves_numbers_to_espeak_as_it_was_trained(tmp_path):
    from xtts_cli.data.phonemes import phonemize

    new = Tokenizer.build(["the cat"], ["english_cleaners"], frontend="phonemes", languages=["en-us"], numbers="words")
    new.save(tmp_path / "vocab.json")
    saved = json.loads((tmp_path / "vocab.json").read_text("utf-8"))
    assert Tokenizer.load(tmp_path / "vocab.json").numbers == "words"
    assert new.prepare("Henry VIII paid $5.", "en-us") == phonemize(["henry the eighth paid five dollars."], "en-us")[0]
    # Saved before (version 2, "words" for the characters front end's sake): its training phonemes were
    # espeak-ng's own reading, which a resumed run must meet again, or a symbol may be new to it.
    saved["version"] = 2
    (tmp_path / "before.json").write_text(json.dumps(saved), "utf-8")
    before = Tokenizer.load(tmp_path / "before.json")
    assert before.numbers == "characters"
    assert before.prepare("Henry VIII paid $5.", "en-us") == phonemize(["henry viii paid $5."], "en-us")[0]


@pytest.mark.parametrize(
    ("language", "text", "read"),
    [
        ("pt", "1.000.000.000 de pessoas, 17 anos", "mil milhões de pessoas, dezassete anos"),
        # Brazil: the short scale and its own spelling, in the Roman numerals too.
        (
            "pt-br",
            "1.000.000.000 de pessoas, 17 anos, século XIX",
            "um bilhão de pessoas, dezessete anos, século dezenove",
        ),
        ("fr-ch", "70, 80 et 90 personnes", "septante, huitante et nonante personnes"),
    ],
)
def test_a_regional_voice_reads_its_regions_number_words(language, text, read):
    from xtts_cli.data.text import prepare_texts

    assert prepare_texts([text], ["multilingual_cleaners"], "characters", language, "words") == [read]


def test_a_decimal_written_without_its_leading_zero_is_read_as_one():
    reader = number_reader("en-us")
    assert reader("It costs $.50 now.") == "It costs fifty cents now."
    assert reader("Add .5 kg of it.") == "Add zero point five kilograms of it."
    assert reader("Wait...5 more") == "Wait...five more"  # an ellipsis is no decimal point


@pytest.mark.parametrize(
    "language, read",
    [
        ("de", "zehn hoch sechs, zwei hoch minus drei"),
        ("fr", "dix puissance six, deux puissance moins trois"),
        ("es", "diez elevado a seis, dos elevado a menos tres"),
        ("tr", "on \u00fczeri alt\u0131, iki \u00fczeri eksi \u00fc\u00e7"),
    ],
)
def test_a_power_is_read_with_the_languages_word_for_it(language, read):
    reader = number_reader(language)
    assert reader is not None and reader("10^6, 2^-3") == read


def test_marks_espeak_reads_as_nothing_are_named_as_left_out_not_dropped_without_a_word():
    """Only PUNCTUATION's marks reach a phonemes run; { } had vanished with no note, and ‹ › [ ] – and
    a spaced hyphen, which stand for marks it keeps, are read as those. A mark espeak-ng says a word
    for (* as asterisk, / as slash) is not left out: it had been named so, in every language."""
    from xtts_cli.data.phonemes import marks_read_as_nothing, phonemize

    read = phonemize(["the cat's mat, on the mat."], "en-us")  # what a run's vocabulary is built from
    vocabulary = Tokenizer.build(read, ["english_cleaners"], frontend="phonemes", languages=["en-us"], numbers="words")
    left = vocabulary.spoken_ids("The cat {mat} on * the mat.", "en-us")[1]
    assert [c for c in left if unicodedata.category(c).startswith("P")] == ["{", "}"]
    assert marks_read_as_nothing("ali@mail.com, and/or 5 * 3 {x}", "fa") == ["{", "}"]
    # Symbols too, where the voice says nothing for them (they had gone unnamed): | and ^, an arrow in Persian.
    assert marks_read_as_nothing("a | b, 2 ^ 3", "en") == ["^", "|"]
    assert marks_read_as_nothing("x \u2192 y", "fa") == ["\u2192"] and marks_read_as_nothing("x \u2192 y", "en") == []
    assert phonemize(["و/یا"], "fa")[0].split()[1] == phonemize(["/"], "fa")[0]  # slash, in Persian
    # An en dash or a hyphen between spaces is the dash, with its pause; ‹ › and [ ] as « » and ( ).
    dashed = phonemize(["He came \u2013 and went.", "He came - and went.", "a \u2039b\u203a [c]"], "en-us")
    assert dashed[0] == dashed[1] == phonemize(["He came \u2014 and went."], "en-us")[0] and "\u2014" in dashed[0]
    assert dashed[2] == phonemize(["a \u00abb\u00bb (c)"], "en-us")[0]
    # A hyphen or apostrophe within a word is read as part of it; « » and the like are kept.
    assert vocabulary.spoken_ids("The cat's mat, on the mat.", "en-us")[1] == []  # the text it was built from
    assert marks_read_as_nothing("a well-known cat's mat \u00abon\u00bb it - 'so'") == [
        "'"
    ]  # the spaced hyphen is the dash


@pytest.mark.parametrize(
    "text, read",
    [
        ("f(x) = 2x + 1", "f of x equals two x plus one"),
        ("3x + 2y = 7", "three x plus two y equals seven"),
        ("y = x * 2", "y equals x times two"),
        ("if a == b and a != c", "if a equals b and a is not equal to c"),
        ("a && b || c", "a and b or c"),
        ("x - 1 and a - b = c", "x minus one and a minus b equals c"),
        # Not code: a range, a dash between words, a speed, a size, a star between words.
        ("pages 10 - 20, the A - Z guide, 2x faster, 1920x1080, on * the", None),
    ],
)
def test_code_and_algebra_read_as_a_reader_says_them(text, read):
    # They had been "two times + one", "equals equals", "!equals", "and and", "x asterisk two".
    reading = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"], numbers="words")
    if read is None:
        assert reading.reading(text, "en") == (
            "pages ten to twenty, the a - z guide, two times faster, one thousand nine hundred and twenty by one "
            "thousand and eighty, on * the"
        )
        # A title's dash after a number or a letter, and speeds: no minus, no unknown x.
        titled = "Chapter 3 - a new start, Vitamin C - 500 mg, speeds of 2x - 4x."
        assert reading.reading(titled, "en") == (
            "chapter three - a new start, vitamin c - five hundred milligrams, speeds of two times - four times."
        )
        # An x, y or n after a title's dash that starts words, not an expression ("minus x marks the spot").
        lettered = "Part 2 - x marks the spot; Chapter 1 - X-Men; Step 3 - n/a; Step 4 - n"
        assert (
            reading.reading(lettered, "en")
            == "part two - x marks the spot; chapter one - x-men; step three - n/a; step four - n"
        )
        assert reading.reading("3 - x + 1", "en") == "three minus x plus one"
    else:
        assert reading.reading(text, "en") == read


def test_march_and_may_with_a_capital_inside_a_sentence_are_months():
    # "See you March 3 and May 4" had been "may four", "On March 10 we go" "march ten": read as the verbs.
    reading = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"], numbers="words")
    assert reading.reading("See you March 3 and May 4 and August 5.", "en") == (
        "see you march third and may fourth and august fifth."
    )
    assert reading.reading("On March 10 we go, and May 11 and 12:30.", "en").startswith(
        "on march tenth we go, and may eleventh"
    )
    assert reading.reading("We march 3 miles; it may 2 times.", "en") == "we march three miles; it may two times."
    assert reading.reading("I saw May 3 times.", "en") == "i saw may three times."  # a count, not a day
    # At a sentence's start, a date where a verb or a comma follows; a count where a noun does.
    assert reading.reading("March 3 is the day. May 4, we go. May 2 people come? March 3 miles.", "en") == (
        "march third is the day. may fourth, we go. may two people come? march three miles."
    )
    assert (
        reading.reading("May 5 to May 9. May 1 or 2 people join.", "en")
        == "may fifth to may ninth. may one or two people join."
    )
    # A month's day before a plural noun is a date, but after "in" a count: "in December 2 people died".
    assert reading.reading("July 4 fireworks and April 1 jokes; in December 2 people died.", "en") == (
        "july fourth fireworks and april first jokes; in december two people died."
    )


def test_scaled_money_ranges_and_everyday_unit_abbreviations_are_read_out():
    # "$50k-$75k" had been read as one run of words ("dollarsseventy"), "25 yrs" as "yrs", "/mo" as "mo"
    # and "100MB/s" as "mb/s".
    reading = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"], numbers="words")
    said = {
        "Between $50k-$75k per year.": "between fifty thousand dollars to seventy five thousand dollars per year.",
        "I am 25 yrs old, 3 wks in.": "i am twenty five years old, three weeks in.",
        "Only $2.99/mo.": "only two dollars and ninety nine cents per month.",
        "It reads 100MB/s on a 1 Gbps link.": "it reads one hundred megabytes per second on a one gigabit per second link.",
        "A $50k-75k job, 5 GB/day.": "a fifty thousand dollars to seventy five thousand dollars job, five gigabytes per day.",
    }
    assert {text: reading.reading(text, "en") for text in said} == said


def test_an_iso_time_stamp_is_read_as_its_date_and_time():
    # It had been "fifteen/oh three/twenty twenty fourt ten:thirty:zero z".
    reading = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"], numbers="words")
    assert reading.reading("Due: 2024-03-15T10:30:00Z.", "en") == (
        "due: the fifteenth of march, twenty twenty four at ten thirty u t c."
    )
    assert reading.reading("Logged 2024-03-15T09:05:15.123+02:00 here", "en") == (
        "logged the fifteenth of march, twenty twenty four at nine oh five u t c plus two here"
    )
    # A log's form, with a space: its seconds had been read as a duration ("ten hours and thirty minutes").
    assert reading.reading("2024-03-15 10:30:00 started", "en") == (
        "the fifteenth of march, twenty twenty four at ten thirty started"
    )
    assert reading.reading("2024-03-15T10:30:00+00:00", "en").endswith("at ten thirty u t c")  # no "plus zero"


def test_meters_grams_and_seconds_written_unspaced_are_read_as_them():
    # "400m hurdles" had been "four hundred million hurdles", "200g of" "two hundred g of", "after 30s" "thirties".
    reading = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"], numbers="words")
    said = {
        "The 400m hurdles and the 100m final.": "the four hundred meter hurdles and the one hundred meter final.",
        "Melt 200g of chocolate in 2l of milk.": "melt two hundred grams of chocolate in two liters of milk.",
        "It timed out after 30s; it took 1s.": "it timed out after thirty seconds; it took one second.",
        "Set the timeout to 30s.": "set the timeout to thirty seconds.",
        # A million, an age and a decade stay so.
        "1.2m people in her 30s liked 80s music.": "one point two million people in her thirties liked eighties music.",
    }
    assert {text: reading.reading(text, "en") for text in said} == said


def test_currency_codes_zip_codes_model_numbers_and_versions_are_read_as_said():
    # "USD 1500" had been "usd fifteen hundred", "CA 90210" "ninety thousand two hundred and ten",
    # "RTX 4090" "four thousand and ninety", "1-800-FLOWERS" "one to eight hundred-flowers".
    reading = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"], numbers="words")
    said = {
        "Pay USD 1500 or 20 CHF or 1 CAD.": "pay one thousand five hundred dollars or twenty swiss francs or one canadian dollar.",
        "It is 2,000.50 EUR.": "it is two thousand euros and fifty cents.",
        "Beverly Hills, CA 90210 or Boston, MA 02139-4307.": (
            "beverly hills, c a nine oh two one oh or boston, m a oh two one three nine four three oh seven."
        ),
        "An RTX 4090, a GTX-1080 and ISO 9001.": "an rtx forty ninety, a gtx ten eighty and iso nine thousand and one.",
        "Call 1-800-FLOWERS or 1-888-GO-FEDEX.": "call one eight hundred flowers or one eight eight eight go fedex.",
        # A version after a program's name or "version": its minor part a number, not digits.
        "Python 3.11 on Ubuntu 22.04, v3.10 and version 2.16.": (
            "python three point eleven on ubuntu twenty two point oh four, v three point ten and version two point sixteen."
        ),
        "It weighs 3.11 kg; Python 3.12.1.": "it weighs three point one one kilograms; python three point twelve point one.",
        # Initials are letters: their dots had been full stops, read as pauses; the last ends a sentence.
        "The U.S. and the U.K. met J.R.R. Tolkien in the U.S. Last year he got a Ph.D.": (
            "the u s and the u k met j r r tolkien in the u s. last year he got a p h d."
        ),
        # What only looks so: a count after a code or a name, a word's capitals, text all in capitals.
        "I sent 3 CAD files, CAD 3D models; CNY 2024 celebrations; Players, UK 10000, came.": (
            "i sent three cad files, cad three d models; cny two thousand and twenty four celebrations; players, "
            "uk ten thousand, came."
        ),
        "The CPU 2048 cores, RAM 2048 MB, 1 800 NHS staff.": (
            "the cpu two thousand and forty eight cores, ram two thousand and forty eight megabytes, one thousand "
            "eight hundred nhs staff."
        ),
        "OVER 1010 PEOPLE CAME.": "over one thousand and ten people came.",
        "AED 1099 only; the FTSE 7650 close; CAD 2024 for drawings; CAD 1.5 million; 20.50 CHF.": (
            "one thousand and ninety nine dirhams only; the ftse seven thousand six hundred and fifty close; cad "
            "twenty twenty four for drawings; one point five million canadian dollars; twenty swiss francs fifty."
        ),
        # Not a version after a program's name: a price, a time; a count of times, not a model's X.
        "Rust 2.50 per pound, the bash 7.30 pm; 100X faster; Boston, MA 60000 per year.": (
            "rust two point five zero per pound, the bash seven thirty p m; one hundred times faster; boston, ma "
            "sixty thousand per year."
        ),
        "Call +1-800-FLOWERS about the F150s and the U.S. Army.": (
            "call one eight hundred flowers about the f one fifties and the u s army."
        ),
        # A model's letters and numbers, a PIN, a port, a hexadecimal number, a war, a date before "is".
        "Two A100s in WWII; error 0x8007; January 1 is cold.": (
            "two a one hundreds in world war two; error zero x eight zero zero seven; january first is cold."
        ),
        "A Ryzen 9 7950X with GDDR6X is 2X faster; the F-150 and I-95.": (
            "a ryzen nine seventy nine fifty x with gddr six x is two times faster; the f one fifty and i ninety five."
        ),
        "Your PIN is 4821; port 8080; update to v2.0.1, Node.js 18.17, version 1.00.": (
            "your pin is four eight two one; port eighty eighty; update to v two point zero point one, node.js "
            "eighteen point seventeen, version one point oh oh."
        ),
        # In lower case a number is a number; a rate after a letter's number is a path's, not "per".
        "a rtx 4090 has 24 gb; see /api/v1/users": "a rtx four thousand and ninety has twenty four gigabytes; see /api/v one/users",
    }
    assert {text: reading.reading(text, "en") for text in said} == said


@pytest.mark.parametrize(
    "text, read",
    [
        ("use i++ in C++, C# and F#", "use i plus plus in c plus plus, c sharp and f sharp"),
        ("x += 1, y -= 2, z *= 3", "x plus equals one, y minus equals two, z times equals three"),
        ("if a >= b and c < d", "if a greater than or equal to b and c less than d"),
        (
            "when x >= 3, or >= 3; for all x > 0",
            "when x greater than or equal to three, or at least three; for all x greater than zero",
        ),
        ("is x >= 0? Settings > Privacy", "is x greater than or equal to zero? settings > privacy"),  # a menu's path
        ("a sonata in C# minor", "a sonata in c sharp minor"),
        # A sum asked for: minus and divided by, not "seven to three"; a date and a fraction stay so.
        (
            "What is 7 - 3? Calculate 100 - 25. What is 8 / 2? I work out 3 - 4. Solve 2 - 3 problems, 3/4 of 2024-03-15",
            "what is seven minus three? calculate one hundred minus twenty five. what is eight divided by two? i work "
            "out three to four. solve two to three problems, three quarters of the fifteenth of march, twenty twenty four",
        ),
    ],
)
def test_code_operators_and_sharps_are_said(text, read):
    # They had been left as "i++", "c++", "+=", ">=" and "c#": marks a voice leaves out or names.
    reading = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"], numbers="words")
    assert reading.reading(text, "en") == read


def test_times_on_the_hour_money_before_a_noun_dates_titles_and_numbers_that_name_read_as_said():
    # Each had been read as its words were written, not as said: "nine o clock a m", "a five dollars
    # bill", "due four fifteenths", "sep twenty twenty three", "artemis i i", "malcolm the tenth",
    # "three point ten or three point one two", "xbox three hundred and sixty", "dial nine hundred and ninety nine".
    reading = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"], numbers="words")
    said = {
        "Doors open at 9:00 AM, lunch at 12:00 PM, at 9:00 the bus.": (
            "doors open at nine a m, lunch at twelve p m, at nine o clock the bus."
        ),
        "A $5 bill, a £10 note, a $2B deal, the $15 minimum wage.": (
            "a five dollar bill, a ten pound note, a two billion dollar deal, the fifteen dollar minimum wage."
        ),
        "It costs $5, I have a $5 and a $10, a $5.99 item.": (
            "it costs five dollars, i have a five dollars and a ten dollars, a five dollars and ninety nine cents item."
        ),
        "Due 4/15, Tue 3/5, the sale ends 11/30, cut the dose by 1/10 each week.": (
            "due april fifteenth, tuesday the third of may, the sale ends november thirtieth, cut the dose by one out "
            "of ten each week."
        ),
        "Released in Sep 2023, Artemis II and Rocky III, Malcolm X, Henry VIII, the XIX century.": (
            "released in september twenty twenty three, artemis two and rocky three, malcolm x, henry the eighth, the "
            "nineteenth century."
        ),
        "Python 3.10, 3.11 and 3.12 are supported, Windows 3.11 was old, Rust 2.50 per pound.": (
            "python three point ten, three point eleven and three point twelve are supported, windows three point one "
            "one was old, rust two point five zero per pound."
        ),
        "Dial 999, error 404, a 301 redirect, 150 errors, ZIP code 90210, Xbox 360, my 401(k), Form 1099.": (
            "dial nine nine nine, error four oh four, a three oh one redirect, one hundred and fifty errors, zip code "
            "nine oh two one oh, xbox three sixty, my four oh one k, form ten ninety nine."
        ),
        # What only looks so: a date's word before a share or a fraction, a weekday's letters in lower case,
        # a count after call, before pages or forms, a verb before IV, a word after "a $5" that is no noun.
        "On 7/4 the parade, by 6/30 every form, sales dropped by 1/3, the boat sat 3/4 submerged.": (
            "on the seventh of april the parade, by june thirtieth every form, sales dropped by a third, the boat sat "
            "three quarters submerged."
        ),
        "The road ends 1/4 mile on, due 1/2 now, open 24/7.": (
            "the road ends a quarter mile on, due a half now, open twenty four seven."
        ),
        "Call 101 customers, a 250 page book, they form 150 groups, the office 365 days a year.": (
            "call one hundred and one customers, a two hundred and fifty page book, they form one hundred and fifty "
            "groups, the office three hundred and sixty five days a year."
        ),
        "Python 3.10 or 3.11 should work. Start IV fluids, the XX chromosome. A $5 isn't much.": (
            "python three point ten or three point eleven should work. start iv fluids, the xx chromosome. a five "
            "dollars isn't much."
        ),
        "Sign up by 5/1, rent on 1/1 each year, Friday 1/2 price wings, a $10 went missing, 150 error reports.": (
            "sign up by the fifth of january, rent on january first each year, friday a half price wings, a ten "
            "dollars went missing, one hundred and fifty error reports."
        ),
        "Friday 1/2 day, Tuesday 3/4 of voters, card expires 12/27, $1 trillion cut from spending.": (
            "friday a half day, tuesday three quarters of voters, card expires twelve over twenty seven, one "
            "trillion dollars cut from spending."
        ),
        "Give $18,000 tax-free; rooms from $99 book now; King Abdullah II and Pharaoh Thutmose III.": (
            "give eighteen thousand dollars tax-free; rooms from ninety nine dollars book now; king abdullah the "
            "second and pharaoh thutmose the third."
        ),
        # Three digits against letters are a code's: "ba one hundred and twenty three" had been read.
        "Flight BA123, an A380, x264, sha256, room B204, user abc123; a 256GB disk.": (
            "flight ba one twenty three, an a three eighty, x two sixty four, sha two fifty six, room b two oh four, "
            "user abc one twenty three; a two hundred and fifty six gigabyte disk."
        ),
        "Victor Emmanuel III fled; Python 3.10 or 11.50 MB of disk.": (
            "victor emmanuel the third fled; python three point ten or eleven point five zero megabytes of disk."
        ),
        "We processed 990 forms, the error 150 times, Python 3.12, 45.50 MB download.": (
            "we processed nine hundred and ninety forms, the error one hundred and fifty times, python three point "
            "twelve, forty five point five zero megabytes download."
        ),
    }
    assert {text: reading.reading(text, "en") for text in said} == said


@pytest.mark.parametrize("cleaner", ["english_cleaners", "multilingual_cleaners"])
@pytest.mark.parametrize(
    ("text", "read"),
    [
        # A power in superscripts, which the default cleaner's NFKC had made "m two" and a wrong number.
        ("The area is 50 m\u00b2.", "the area is fifty square meters."),
        ("a 10 m\u00b3 tank", "a ten cubic meter tank"),
        ("x\u00b2 + y\u00b2 = z\u00b2.", "x squared plus y squared equals z squared."),
        ("6.022 \u00d7 10\u00b2\u00b3 atoms", "six point zero two two times ten to the power of twenty three atoms"),
        ("2\u207b\u00b9 is half", "two to the power of minus one is half"),
        ("The study\u00b2\u00b3 found it.", "the study found it."),  # a footnote's mark
        ("Call 555 123 4567 today.", "call five five five, one two three, four five six seven today."),
        ("It costs 99\u00a2.", "it costs ninety nine cents."),
        ("Sen. Warren and Rep. Ocasio-Cortez met.", "senator warren and representative ocasio-cortez met."),
        ("Apple Inc. and Acme Corp. reported.", "apple incorporated and acme corporation reported."),
        ("I work at Apple Inc. It is fun.", "i work at apple incorporated. | it is fun."),
        # What the capitals tell apart: repetitions, and "inc." for including.
        ("Do ten reps. Rest for a minute.", "do ten reps. | rest for a minute."),
        ("It is \u00a399 inc. VAT.", "it is ninety nine pounds including vat."),
        ("The total is \u00a399 inc. Delivery is free.", "the total is ninety nine pounds inc. | delivery is free."),
        ("apple inc. reported.", "apple inc. reported."),  # lowered text: the company, not "including"
        # A capital after a number is a letter (a flat, a seat, a pencil's hardness), not hours.
        ("Flat 4H, seat 14H, a 2H pencil.", "flat four h, seat fourteen h, a two h pencil."),
        ("Cut CO\u00b2 now.", "cut co two now."),  # CO\u2082 misspelt: its digit, no power
        ("The team won between 3-1 and 4-0.", "the team won between three to one and four to zero."),
        # An ion's charge is no power; a function's or a unit's after its slash is; a mark after a
        # comma is a footnote's.
        ("x\u00b2y + a\u00b2b\u00b2", "x squared y plus a squared b squared"),
        # A variable's power after its coefficient: its letter, not "times" ("twelve times squared").
        ("The answer is 12 x^2.", "the answer is twelve x squared."),
        ("5 x\u00b2 and 2x^3, 3x faster", "five x squared and two x cubed, three times faster"),
        ("Sales grew 3x to the highest level.", "sales grew three times to the highest level."),
        # A power before a letter or a minus: its own word, and minus (not "squaredy", "squared to one").
        ("6x^2y - 1 and x^3z + 1", "six x squared y minus one and x cubed z plus one"),
        ("x^2 - 1, 2 - 1", "x squared minus one, two to one"),
        ("y = 2 + 3x.", "y equals two plus three x."),  # the equation's term, not "three times"
        ("y = 2x - 3x", "y equals two x minus three x"),  # its minus kept (the term read before it had lost it)
        ("y = 3 - 3x", "y equals three minus three x"),  # not a range, "three to three times"
        ("6x^2y * 3 and y = x^2-3x", "six x squared y times three and y equals x squared minus three x"),
        (
            "The answer is 12 x^2 - 1, or (x+1)^2 - 1.",
            "the answer is twelve x squared minus one, or (x plus one) squared minus one.",
        ),
        # An area's range and a multiplier stay as they were read: "to", "times".
        ("The room is 10 m^2 - 12 m^2.", "the room is ten square meters to twelve square meters."),
        ("zoom = 3x", "zoom equals three times"),
        ("With a cache, speedup = 2 - 3x", "with a cache, speedup equals two to three times"),  # "a": the article
        (
            "10m^2 - 12m^2, 9.8 m/s^2 - 10 m/s^2",
            "ten square meters to twelve square meters, nine point eight m/s squared to ten m/s squared",
        ),
        ("3x^2 - 2x^2", "three x squared minus two x squared"),
        # A sign written on its number after a space is no range: "20 -5" (it had been "twenty to five").
        ("Lows of 20 -5 and 5-10 cm.", "lows of twenty minus five and five to ten centimeters."),
        ("We met on 3/4/05.", "we met on the third of april, oh five."),
        ("5 x to the 4th and 4x to the nth power", "five x to the fourth and four x to the nth power"),
        ("sin\u00b2\u03b8 and 32 ft/sec\u00b2", "sin squared \u03b8 and thirty two ft/sec squared"),
        ("as reported,\u00b3 then", "as reported, then"),
        ("A 10\u00a2 stamp.", "a ten cent stamp."),
        ("He drove 300 mi. yesterday.", "he drove three hundred miles yesterday."),
        ("Cut into 1/2-inch pieces.", "cut into half-inch pieces."),
        ("The 1/4 mile is fast.", "the quarter mile is fast."),
        ("He ran a 1/4 mile.", "he ran a quarter mile."),
        ("Order a 12 in. pizza, 12 in. long.", "order a twelve inch pizza, twelve inches long."),
        (
            "It took 1h 30m, then 2 h 15 min.",
            "it took one hour thirty minutes, then two hours fifteen minutes.",
        ),
        (
            "Between 2020-2022, between 5-10 people.",
            "between twenty twenty and twenty twenty two, between five and ten people.",
        ),
        ("If 5 > 3, is 10 < 20?", "if five is greater than three, is ten less than twenty?"),
    ],
)
def test_what_synthesis_reads_of_a_sentence_with_either_cleaner(cleaner, text, read):
    from xtts_cli.data.text import prepare_texts, split_sentences

    assert " | ".join(prepare_texts(split_sentences(text, "en"), [cleaner], "characters", "en", "words")) == read


@pytest.mark.parametrize(
    ("language", "text", "read"),
    [
        ("fr", "Des fruits, par ex. les pommes.", "des fruits, par exemple les pommes."),
        ("fr", "Des fruits, p. ex. les pommes.", "des fruits, par exemple les pommes."),
        ("es", "Frutas, por ej. manzanas.", "frutas, por ejemplo manzanas."),
        ("es", "Frutas, p. ej. manzanas.", "frutas, por ejemplo manzanas."),
        ("en", "Calcium ions (Ca\u00b2\u207a).", "calcium ions (ca two plus)."),  # a charge, no power
        ("de", "Die Wohnung hat 80 m\u00b2 und 1 m\u00b3.", "die wohnung hat achtzig quadratmeter und ein kubikmeter."),
        ("fr", "De 80 m\u00b2, 1 m\u00b2.", "de quatre vingts mètres carrés, un mètre carré."),
        ("es", "Un piso de 80 m\u00b2.", "un piso de ochenta metros cuadrados."),
        ("it", "Di 80 m\u00b2.", "di ottanta metri quadrati."),
        (
            "de",
            "12 \u20ac pro m\u00b2 und 1,5 mm\u00b2.",
            "zwölf euro pro quadratmeter und eins komma fünf quadratmillimeter.",
        ),
        ("fr", "Prix au m\u00b2.", "prix au mètre carré."),
        ("de", "Im Winter 1200 Besucher.", "im winter eintausendzweihundert besucher."),  # a count, no year
    ],
)
def test_for_example_and_square_meters_written_short_are_read_out_inside_their_sentence(language, text, read):
    from xtts_cli.data.text import prepare_texts, split_sentences

    said = prepare_texts(split_sentences(text, language), ["multilingual_cleaners"], "characters", language, "words")
    assert " | ".join(said) == read
