"""A number before a noun takes the noun's gender and the counting form: Spanish "1 libro" is "un
libro" and "21 personas" "veintiuna personas", Portuguese "2 casas" "duas casas" and "200 pessoas"
"duzentas pessoas", German "1 Frau" "eine frau" and "1 Mann" "ein mann", Italian "1 casa" "una casa",
French "21 pages" "vingt et une pages", Russian "1 кошка" "одна кошка", Swedish "1 bil" "en bil"
(num2words writes the number alone: uno, dois, eins, один, ett).

The gender comes from the noun's ending and a list of common nouns it misleads (Spanish "día" is
masculine, "mano" feminine); a noun it does not know is read masculine, as num2words did. A number
after a word that labels it ("página 1", "Kapitel 1") or before a word that is not a noun ("1 de
ellos", "1 y 2") is a name or a count of its own and keeps num2words' form.
"""

from __future__ import annotations

import re

__all__ = ["agree"]

# Feminine by ending (singular and plural), save the exceptions; feminine nouns the endings miss.
_FEMININE_ENDINGS = {
    "es": re.compile(r"(?:a|as|ión|iones|dad|dades|tad|tades|tud|tudes|umbre|umbres)$"),
    "pt": re.compile(r"(?:a|as|ção|ções|são|sões|dade|dades|agem|agens)$"),
    "it": re.compile(r"(?:a|ione|tà|tù)$"),
    "de": re.compile(r"(?:e|ung|heit|keit|schaft|ion|tät|ik|ei|ie|ur|enz|anz)$"),
    "fr": re.compile(r"(?:tion|sion|té|ette|ance|ence|ure|ude|ée|ière|elle|esse|ise|ade|aine|ie|ine|ille)s?$"),
}
_MASCULINE = {
    "es": "día|días|mapa|mapas|problema|problemas|tema|temas|sistema|sistemas|programa|programas|idioma|idiomas|"
    "clima|climas|planeta|planetas|poema|poemas|drama|dramas|esquema|esquemas|síntoma|síntomas|cometa|sofá|sofás|"
    "papá|papás|fantasma|fantasmas|diploma|diplomas|panorama|avión|aviones|camión|camiones|guía|guías|policía",
    "pt": "dia|dias|mapa|mapas|problema|problemas|tema|temas|sistema|sistemas|programa|programas|idioma|idiomas|"
    "clima|planeta|planetas|poema|poemas|cinema|cinemas|telefonema|esquema|diploma|sofá|sofás|pijama|guia|guias",
    "it": "problema|sistema|tema|programma|clima|poeta|papa|cinema|pigiama|pianeta|dramma|poema|diploma|milione|"
    "camion|campione",
    "de": "junge|name|käse|affe|löwe|kunde|hase|gedanke|glaube|buchstabe|kollege|franzose|experte|riese|"
    "auge|ende|interesse|erbe|gebirge|gemüse|gebäude|getränke|ei|knie|kaffee|tee|see|schnee|klee|abitur",
    "fr": "été|côté|comité|pâté|traité|musée|lycée|trophée|génie|incendie|parapluie|magazine|silence|capitaine|"
    "domaine|squelette|squelettes|jeudi",
}
_FEMININE = {
    "es": "mano|manos|foto|fotos|moto|motos|flor|flores|mujer|mujeres|noche|noches|calle|calles|parte|partes|"
    "clase|clases|vez|veces|madre|madres|leche|nube|nubes|llave|llaves|ley|leyes|luz|luces|voz|voces|imagen|"
    "imágenes|muerte|tarde|tardes|torre|torres|fuente|fuentes|red|redes|piel|sal|gente|carne|sangre|suerte",
    "pt": "mulher|mulheres|vez|vezes|noite|noites|mão|mãos|flor|flores|parte|partes|classe|classes|tarde|tardes|"
    "mãe|mães|ponte|pontes|morte|sorte|fonte|fontes|nuvem|nuvens|ordem|foto|fotos|moto|motos|cor|cores|dor|"
    "dores|lei|leis|luz|luzes|voz|vozes|pele|rede|redes|chave|chaves|torre|torres|gente|carne|árvore|árvores",
    "it": "mano|notte|parte|classe|gente|madre|chiave|nave|torre|morte|sorte|fonte|mente|arte|luce|voce|pace|"
    "legge|rete|sede|foto|moto|radio|frase|fame|neve|nube|carne",
    "de": "frau|hand|nacht|stadt|welt|zeit|tür|milch|person|maus|wand|bank|kuh|gans|burg|kraft|angst|wurst",
    "fr": "maison|fois|main|nuit|femme|fleur|mer|page|image|plage|cage|minute|seconde|chose|ville|table|chaise|"
    "porte|fenêtre|pomme|langue|clé|place|étoile|école|histoire|idée|raison|saison|chanson|façon|leçon|boisson|"
    "dent|faim|fin|forêt|loi|mort|part|peau|voix|paix|eau|croix|tasse|vie|personne|semaine|heure|année|voiture",
}
_MASCULINE_WORDS = {language: frozenset(words.split("|")) for language, words in _MASCULINE.items()}
_FEMININE_WORDS = {language: frozenset(words.split("|")) for language, words in _FEMININE.items()}

# Words after a number that are not nouns (1 de ellos, 1 y 2) and words before one that label it
# (página 1, Kapitel 1): the number keeps its own form.
_NOT_NOUNS = {
    "es": "y|o|u|e|de|del|a|al|en|por|para|con|sin|que|más|menos|entre|hasta|desde|es|son|fue|era|sobre|contra|mil",
    "pt": "e|ou|de|do|da|dos|das|a|ao|à|em|no|na|por|para|com|sem|que|mais|menos|entre|até|desde|é|são|foi|era|"
    "sobre|contra|mil",
    "it": "e|o|di|del|della|a|al|in|nel|per|con|senza|che|più|meno|tra|fra|fino|da|è|sono|era|su|contro|mille",
    "de": "und|oder|von|zu|zum|zur|in|im|mit|ohne|als|bis|für|ist|sind|war|auf|gegen|aus|tausend|prozent|nach|bei|"
    "beim|seit|vor|an|am|unter|über|durch|um|der|die|das|den|dem|des|ein|eine|nicht|auch|aber|noch|nur|wie|"
    "wenn|weil|dass|dann|so",
    "fr": "et|ou|de|du|des|à|au|aux|en|par|pour|avec|sans|que|plus|moins|entre|jusqu|est|sont|était|sur|contre|mille",
}
_LABELS = {
    "es": "capítulo|página|número|núm|artículo|paso|opción|nivel|tipo|grupo|sección|parte|punto|línea|versión|"
    "habitación|puerta|planta|piso|ruta|canal|figura|tabla|ejemplo|caso|fase|lección|tema|unidad|episodio|"
    "temporada|año|día|categoría|clase|edición|pista|sala|zona|equipo|jugador|modelo|volumen|tomo|libro",
    "pt": "capítulo|página|número|artigo|passo|opção|nível|tipo|grupo|secção|seção|parte|ponto|linha|versão|"
    "quarto|porta|andar|rota|canal|figura|tabela|exemplo|caso|fase|lição|tema|unidade|episódio|temporada|ano|"
    "dia|categoria|classe|edição|faixa|sala|zona|equipe|equipa|jogador|modelo|volume|tomo|livro",
    "it": "capitolo|pagina|numero|articolo|passo|opzione|livello|tipo|gruppo|sezione|parte|punto|linea|versione|"
    "camera|porta|piano|canale|figura|tabella|esempio|caso|fase|lezione|tema|unità|episodio|stagione|anno|"
    "giorno|categoria|classe|edizione|traccia|sala|zona|squadra|giocatore|modello|volume|tomo|libro",
    "de": "kapitel|seite|nummer|nr|artikel|schritt|option|stufe|typ|gruppe|abschnitt|teil|punkt|zeile|version|"
    "zimmer|tür|etage|linie|kanal|abbildung|tabelle|beispiel|fall|phase|lektion|thema|einheit|folge|staffel|"
    "jahr|tag|kategorie|klasse|ausgabe|gleis|saal|zone|team|spieler|modell|band|buch|platz|runde|level",
    "fr": "chapitre|page|numéro|article|étape|option|niveau|type|groupe|section|partie|point|ligne|version|"
    "chambre|porte|étage|canal|figure|tableau|exemple|cas|phase|leçon|thème|unité|épisode|saison|année|jour|"
    "catégorie|classe|édition|piste|salle|zone|équipe|joueur|modèle|volume|tome|livre|numero",
}
_NOUN_AFTER = re.compile(r"\s+([^\W\d_]+)")
_WORD_BEFORE = re.compile(r"([^\W\d_]+)\.?\s*$")
_NOT_NOUN_WORDS = {language: frozenset(words.split("|")) for language, words in _NOT_NOUNS.items()}
_LABEL_WORDS = {language: frozenset(words.split("|")) for language, words in _LABELS.items()}
# Where the tail of a large number starts: "doscientos millones de personas" keeps the millions masculine.
_LARGE = re.compile(r".*\b(?:mill(?:ón|ones)|bill(?:ón|ones)|milh(?:ão|ões)|bilh(?:ão|ões))\b\s*")
# German prepositions that take the dative, where "one" is einem or einer whatever the noun's gender
# past the feminine (the accusative's einen and ein would need the neuter too).
_GERMAN_DATIVE = frozenset("mit von zu bei nach aus seit vor in an auf unter über gegenüber".split())
# German prepositions that take the accusative, where "one" before a masculine noun is einen (für einen
# mann, um einen euro; ein before a neuter one). Neuter nouns by ending (mädchen, fräulein, museum)
# and the common ones the endings miss; a noun neither feminine nor neuter is read masculine.
_GERMAN_ACCUSATIVE = frozenset("für durch gegen ohne um".split())
_GERMAN_NEUTER_ENDINGS = re.compile(r"(?:chen|lein|ium|eum)$")
_GERMAN_NEUTER = frozenset(
    "jahr kind haus buch wort auto mal land bild spiel zimmer problem ziel stück glas bett fenster geld leben "
    "ende auge interesse ei knie gebäude gemüse getränk getränke gebirge mädchen hotel restaurant büro kino foto "
    "radio konto ticket bier brot wasser essen tier pferd schiff boot flugzeug fahrrad dorf feld lied jahrzehnt "
    "jahrhundert prozent kilo gramm pfund paar dutzend mittel blatt licht recht system thema programm projekt "
    "angebot ergebnis zeugnis gesetz gefühl gespräch geschenk gericht gebiet gerät team unternehmen "
    "semester wochenende zentrum datum studium dokument instrument experiment parlament argument element "
    "medikament kompliment appartement eigentum".split()
)
# A German infinitive or participle (gewinnen, gewonnen, gemacht) after the number; "1 Kuchen" is left too.
_GERMAN_VERB = re.compile(r"(?:en|ern|eln)$|^ge[^\W\d_]+t$")
_GERMAN_CHEN_NOT_SMALL = frozenset("kuchen knochen drachen rachen".split())  # der Kuchen: not a diminutive
# Nouns in -en the verb pattern would take: ein kuchen, ein mädchen (and the neuter list above).
_GERMAN_EN_NOUNS = frozenset(
    "kuchen wagen garten laden boden magen regen rücken hafen ofen norden süden osten westen bogen daumen "
    "faden felsen frieden graben haken kasten knochen kragen posten rahmen schaden schatten schinken "
    "schrecken streifen tropfen verfahren wesen wissen vermögen verbrechen becken kissen zeichen".split()
)
# Italian "uno" before s and a consonant, z, gn, ps, x, y, pn: uno zio, uno studente; "un" before the rest.
_ITALIAN_UNO = re.compile(r"(?:s[^aeiouàèéìòù]|z|gn|ps|x|y|pn)")


def _feminine(noun: str, language: str) -> bool:
    # The lists hold singulars (and Spanish and Portuguese plurals): "pages" is looked up as "page".
    forms = {noun, noun[:-1]} if noun.endswith(("s", "x")) else {noun}
    if forms & _FEMININE_WORDS[language]:
        return True
    return not forms & _MASCULINE_WORDS[language] and bool(_FEMININE_ENDINGS[language].search(noun))


# Russian and Polish: "one" takes the gender the noun after it shows in its ending (одна кошка,
# одно окно, jedna kobieta, jedno okno), and Russian "two" the feminine where the noun's genitive
# singular ends in -ы or -и (две кошки; два стола, два дня). Nouns in -а that are masculine are listed.
_SLAVIC_ONE = {"ru": ("один", "одна", "одно"), "pl": ("jeden", "jedna", "jedno")}
_SLAVIC_ENDINGS = {"ru": ("ая", "оеё"), "pl": ("a", "oeęu")}
_SLAVIC_MASCULINE = {
    "ru": frozenset("папа дядя мужчина дедушка юноша судья слуга коллега".split()),
    "pl": frozenset("kolega poeta tata mężczyzna sędzia artysta".split()),
}


_SLAVIC_NOT_NOUNS = {
    "ru": frozenset("и или в на с по из до от к за о а но не это как".split()),
    "pl": frozenset("i lub w na z do od o a ale nie to jak oraz".split()),
}


# Polish plurals after two look alike in every gender (koty, kobiety), so the feminine ones that take
# "dwie" are the endings only feminine nouns have (-ości, -cje: wiadomości, lekcje) and a list.
_POLISH_FEMININE_PLURAL = re.compile(r"(?:ości|cje|sje|zje)$")
_POLISH_FEMININE_PLURALS = frozenset(
    "osoby kobiety godziny minuty sekundy strony książki rzeczy noce córki siostry matki dziewczyny koleżanki "
    "szkoły ulice drogi butelki kawy herbaty filiżanki łyżki tabletki klasy sztuki nogi ręce pary rodziny "
    "firmy gwiazdy szanse zmiany wody części sypialnie łazienki żony babcie ciocie nauczycielki "
    "strefy linie trasy partie grupy sceny pory doby połowy ćwierci".split()
)


def _polish_feminine_plural(noun: str) -> bool:
    return noun in _POLISH_FEMININE_PLURALS or bool(_POLISH_FEMININE_PLURAL.search(noun))


def _slavic(said: str, noun: str, language: str) -> str:
    if noun in _SLAVIC_NOT_NOUNS[language]:
        return said
    *before, last = said.split(" ")
    one, feminine, neuter = _SLAVIC_ONE[language]
    if last == one and noun not in _SLAVIC_MASCULINE[language]:
        female, neutral = _SLAVIC_ENDINGS[language]
        last = feminine if noun[-1] in female else neuter if noun[-1] in neutral else last
    elif last == "два" and language == "ru" and noun[-1] in "ыи":
        last = "две"
    elif last == "dwa" and language == "pl" and _polish_feminine_plural(noun):
        last = "dwie"  # dwie osoby, dwadzieścia dwie godziny
    return " ".join([*before, last])


def agree(said: str, text: str, start: int, end: int, language: str) -> str:
    """`said`, the words num2words wrote for the whole number text[start:end], in the form the noun
    after it asks for; unchanged where there is no noun, the noun's gender is not known or the
    language has no such forms."""
    if language in _SLAVIC_ONE:
        after = _NOUN_AFTER.match(text, end)
        return _slavic(said, after.group(1).lower(), language) if after else said
    if language == "sv":
        return _swedish(said, text, start, end)
    if language not in _FEMININE_ENDINGS:
        return said
    after = _NOUN_AFTER.match(text, end)
    if after is None or after.group(1) in _NOT_NOUN_WORDS[language]:
        return said
    before = _WORD_BEFORE.search(text, 0, start)
    if before is not None and before.group(1) in _LABEL_WORDS[language]:
        return said
    noun = after.group(1)
    if language == "de" and _german_verb(noun):  # "3 zu 1 gewonnen": the verb at the clause's end
        return said
    feminine = _feminine(noun, language)
    if language == "de" and said == "eins":
        return _german_one(noun, feminine, before.group(1) if before is not None else "")
    head_match = _LARGE.match(said)
    head, tail = (said[: head_match.end()], said[head_match.end() :]) if head_match else ("", said)
    return head + _counted(tail, noun, language, feminine)


# Swedish "one" before a noun is en, or ett before a neuter (ett-)noun: en bil, en kvinna, ett hus. num2words
# writes "ett" alone, which stays for a label's number ("kapitel 1", "klockan 1") and a count of its own.
_SWEDISH_NEUTER = frozenset(
    "år hus barn bord rum land jobb ord namn språk problem system exempel program företag kilo glas äpple brev "
    "fönster tåg ben öga öra huvud hjärta liv hem kök bad fall svar mål spel lag djur träd hotell kontor möte "
    "beslut förslag paket papper pris kort konto tal stycke steg dygn ögonblick par dussin landskap sällskap "
    "bageri universitet museum centrum argument dokument experiment instrument moment parti kapitel".split()
)
_SWEDISH_NEUTER_ENDINGS = re.compile(r"(?:ande|ende|eri|um|ment)$")
_SWEDISH_NOT_NOUNS = frozenset("och eller av till i på med för från om att som men än är var vid mot".split())
_SWEDISH_LABELS = frozenset(
    "kapitel sida nummer nr klockan kl rum avsnitt del steg version år typ grupp nivå fas lektion säsong klass "
    "plats spår linje buss rad punkt".split()
)


def _swedish(said: str, text: str, start: int, end: int) -> str:
    after = _NOUN_AFTER.match(text, end)
    if said != "ett" or after is None or after.group(1) in _SWEDISH_NOT_NOUNS:
        return said
    before = _WORD_BEFORE.search(text, 0, start)
    if before is not None and before.group(1) in _SWEDISH_LABELS:
        return said
    noun = after.group(1)
    return "ett" if noun in _SWEDISH_NEUTER or _SWEDISH_NEUTER_ENDINGS.search(noun) else "en"


def _german_one(noun: str, feminine: bool, preposition: str) -> str:
    if noun == "uhr":  # the hour: um ein uhr, seit ein uhr
        return "ein"
    if preposition in _GERMAN_DATIVE:
        return "einer" if feminine else "einem"  # mit einer frau, seit einem jahr, vor einer woche
    if feminine:
        return "eine"
    if preposition in _GERMAN_ACCUSATIVE and not _german_neuter(noun):
        return "einen"  # für einen mann, um einen euro
    return "ein"


def _german_verb(noun: str) -> bool:
    return bool(_GERMAN_VERB.search(noun)) and noun not in _GERMAN_EN_NOUNS and not _german_neuter(noun)


def german_neuter(noun: str) -> bool:
    """A German noun (lower case) known neuter: by its ending (mädchen, museum) or by name (buch)."""
    return _german_neuter(noun)


def _german_neuter(noun: str) -> bool:
    if noun in _GERMAN_CHEN_NOT_SMALL:
        return False
    return noun in _GERMAN_NEUTER or bool(_GERMAN_NEUTER_ENDINGS.search(noun))


def _counted(words: str, noun: str, language: str, feminine: bool) -> str:
    if language == "es":
        if feminine:
            words = re.sub(r"ientos\b", "ientas", words)
            return re.sub(r"uno$", "una", words)
        return re.sub(r"veintiuno$", "veintiún", re.sub(r"\buno$", "un", words))
    if language == "pt":
        if feminine:
            words = re.sub(r"entos\b", "entas", words)
            return re.sub(r"\bdois\b", "duas", re.sub(r"\bum\b", "uma", words))
        return words
    if language == "fr":  # vingt et une, quatre vingt une
        return re.sub(r"\bun$", "une", words) if feminine else words
    return _ONE[language](noun, feminine) if words == "uno" else words  # Italian "one" alone (German: _german_one)


_ONE = {
    # Feminine "una" elides before a vowel: un'ora, un'amica (numbers.py joins it to its noun).
    "it": lambda noun, feminine: (
        ("un'" if noun[0] in "aeiouàèéìòù" else "una") if feminine else ("uno" if _ITALIAN_UNO.match(noun) else "un")
    ),
}
