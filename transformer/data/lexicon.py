"""The words of the toy English→Spanish grammar, every form written out by hand.

Nothing is inflected by rule, so irregular forms (mice, ate, tuvo, hizo, fue) are as safe
as regular ones. Kinds ("person", "food", "openable", ...) keep sentences sensible: a verb,
adjective or preposition lists the kinds of noun it goes with.
"""

from dataclasses import dataclass

TENSES = ("present", "past", "future")
ANIMATE = frozenset({"person", "animal"})


def tensed(forms, tense: str, plural: bool) -> str:
    """Pick from forms listed as (present sg, pl, past sg, pl, future sg, pl)."""
    return forms[2 * TENSES.index(tense) + plural]


@dataclass(frozen=True)
class Noun:
    """English and Spanish forms, Spanish gender ("m"/"f") and kinds of a noun.

    A mass noun (milk, bread) has no plural forms and is used in the singular only.
    """

    english: str
    spanish: str
    gender: str
    kinds: frozenset[str]
    english_plural: str | None = None
    spanish_plural: str | None = None

    @property
    def countable(self) -> bool:
        return self.english_plural is not None


@dataclass(frozen=True)
class Adjective:
    """English form, Spanish forms (m, f, m plural, f plural), copula and kinds described.

    The copula is "ser" for a lasting property (colour, size) and "estar" for a state.
    """

    english: str
    forms: tuple[str, str, str, str]
    copula: str
    kinds: frozenset[str]

    def spanish(self, gender: str, plural: bool) -> str:
        """The form agreeing with a noun of `gender` and number."""
        return self.forms[2 * plural + (gender == "f")]


@dataclass(frozen=True)
class Verb:
    """English base, 3rd singular and past; Spanish 3rd person forms; the frame it takes.

    Spanish forms run (present sg, pl, preterite sg, pl, future sg, pl). The frame says
    what follows the verb: "transitive" an object, "motion" "to" a place, "activity"
    optionally "in" a place. `subjects` and `objects` are the kinds of noun accepted.
    """

    english: tuple[str, str, str]
    spanish: tuple[str, str, str, str, str, str]
    frame: str
    subjects: frozenset[str]
    objects: frozenset[str]

    def spanish_form(self, tense: str, plural: bool) -> str:
        """The 3rd person form in `tense` (the past is the preterite)."""
        return tensed(self.spanish, tense, plural)


@dataclass(frozen=True)
class Preposition:
    """A preposition of place, its Spanish words, and the kinds of noun it locates by."""

    english: str
    spanish: tuple[str, ...]
    kinds: frozenset[str]


def _noun(english: str, spanish: str, gender: str, kinds: str) -> Noun:
    """A noun written "cat cats", "gato gatos" (a mass noun: one form per language)."""
    english_forms, spanish_forms = english.split(), spanish.split()
    return Noun(english_forms[0], spanish_forms[0], gender, frozenset(kinds.split()),
                *english_forms[1:], *spanish_forms[1:])


def _adjective(english: str, forms: str, copula: str, kinds: str) -> Adjective:
    """An adjective written "rojo roja rojos rojas"."""
    return Adjective(english, tuple(forms.split()), copula,  # type: ignore[arg-type]
                     frozenset(kinds.split()))  # (four forms, as the lexicon writes them)


def _verb(english: str, spanish: str, frame: str, subjects: str, objects: str) -> Verb:
    """A verb written "eat eats ate", "come comen comió comieron comerá comerán"."""
    return Verb(tuple(english.split()), tuple(spanish.split()), frame,  # type: ignore[arg-type]
                frozenset(subjects.split()), frozenset(objects.split()))


NOUNS = (
    _noun("man men", "hombre hombres", "m", "person"),
    _noun("woman women", "mujer mujeres", "f", "person"),
    _noun("boy boys", "niño niños", "m", "person"),
    _noun("girl girls", "niña niñas", "f", "person"),
    _noun("king kings", "rey reyes", "m", "person"),
    _noun("queen queens", "reina reinas", "f", "person"),
    _noun("father fathers", "padre padres", "m", "person"),
    _noun("mother mothers", "madre madres", "f", "person"),
    _noun("brother brothers", "hermano hermanos", "m", "person"),
    _noun("sister sisters", "hermana hermanas", "f", "person"),
    _noun("grandfather grandfathers", "abuelo abuelos", "m", "person"),
    _noun("grandmother grandmothers", "abuela abuelas", "f", "person"),
    _noun("actor actors", "actor actores", "m", "person"),
    _noun("actress actresses", "actriz actrices", "f", "person"),
    _noun("animal animals", "animal animales", "m", "animal"),
    _noun("cat cats", "gato gatos", "m", "animal"),
    _noun("dog dogs", "perro perros", "m", "animal"),
    _noun("horse horses", "caballo caballos", "m", "animal"),
    _noun("bird birds", "pájaro pájaros", "m", "animal"),
    _noun("cow cows", "vaca vacas", "f", "animal"),
    _noun("mouse mice", "ratón ratones", "m", "animal"),
    _noun("duck ducks", "pato patos", "m", "animal"),
    _noun("rabbit rabbits", "conejo conejos", "m", "animal"),
    _noun("lion lions", "león leones", "m", "animal"),
    _noun("fox foxes", "zorro zorros", "m", "animal"),
    _noun("frog frogs", "rana ranas", "f", "animal"),
    _noun("goat goats", "cabra cabras", "f", "animal"),
    _noun("bear bears", "oso osos", "m", "animal"),
    _noun("monkey monkeys", "mono monos", "m", "animal"),
    _noun("turtle turtles", "tortuga tortugas", "f", "animal"),
    _noun("snake snakes", "serpiente serpientes", "f", "animal"),
    _noun("wolf wolves", "lobo lobos", "m", "animal"),
    _noun("bread", "pan", "m", "food dish"),
    _noun("apple apples", "manzana manzanas", "f", "food"),
    _noun("cake cakes", "pastel pasteles", "m", "food dish"),
    _noun("cheese", "queso", "m", "food"),
    _noun("egg eggs", "huevo huevos", "m", "food"),
    _noun("orange oranges", "naranja naranjas", "f", "food"),
    _noun("banana bananas", "plátano plátanos", "m", "food"),
    _noun("cookie cookies", "galleta galletas", "f", "food dish"),
    _noun("rice", "arroz", "m", "food dish"),
    _noun("meat", "carne", "f", "food"),
    _noun("soup", "sopa", "f", "food dish"),
    _noun("carrot carrots", "zanahoria zanahorias", "f", "food"),
    _noun("tomato tomatoes", "tomate tomates", "m", "food"),
    _noun("potato potatoes", "patata patatas", "f", "food"),
    _noun("strawberry strawberries", "fresa fresas", "f", "food"),
    _noun("lemon lemons", "limón limones", "m", "food"),
    _noun("sandwich sandwiches", "bocadillo bocadillos", "m", "food dish"),
    _noun("pizza pizzas", "pizza pizzas", "f", "food dish"),
    _noun("milk", "leche", "f", "drink"),
    _noun("juice", "zumo", "m", "drink"),
    _noun("coffee", "café", "m", "drink"),
    _noun("tea", "té", "m", "drink"),
    _noun("lemonade", "limonada", "f", "drink"),
    _noun("park parks", "parque parques", "m", "place crossable"),
    _noun("house houses", "casa casas", "f", "place building"),
    _noun("street streets", "calle calles", "f", "place crossable"),
    _noun("school schools", "escuela escuelas", "f", "place building"),
    _noun("garden gardens", "jardín jardines", "m", "place"),
    _noun("kitchen kitchens", "cocina cocinas", "f", "place"),
    _noun("river rivers", "río ríos", "m", "place water crossable"),
    _noun("beach beaches", "playa playas", "f", "place"),
    _noun("forest forests", "bosque bosques", "m", "place crossable"),
    _noun("city cities", "ciudad ciudades", "f", "place crossable"),
    _noun("market markets", "mercado mercados", "m", "place building"),
    _noun("church churches", "iglesia iglesias", "f", "place building"),
    _noun("room rooms", "habitación habitaciones", "f", "place"),
    _noun("hospital hospitals", "hospital hospitales", "m", "place building"),
    _noun("library libraries", "biblioteca bibliotecas", "f", "place building"),
    _noun("bridge bridges", "puente puentes", "m", "place crossable cover"),
    _noun("square squares", "plaza plazas", "f", "place crossable"),
    _noun("field fields", "campo campos", "m", "place crossable"),
    _noun("station stations", "estación estaciones", "f", "place building"),
    _noun("lake lakes", "lago lagos", "m", "place water"),
    _noun("museum museums", "museo museos", "m", "place building"),
    _noun("village villages", "pueblo pueblos", "m", "place"),
    _noun("road roads", "camino caminos", "m", "place crossable"),
    _noun("sea seas", "mar mares", "m", "place water"),
    _noun("ball balls", "bola bolas", "f", "object portable"),
    _noun("book books", "libro libros", "m", "object portable text openable"),
    _noun("box boxes", "caja cajas", "f", "object portable openable surface"),
    _noun("table tables", "mesa mesas", "f", "object surface cover"),
    _noun("chair chairs", "silla sillas", "f", "object surface cover"),
    _noun("car cars", "coche coches", "m", "object cover"),
    _noun("cup cups", "taza tazas", "f", "object portable fragile container"),
    _noun("letter letters", "carta cartas", "f", "object portable text openable"),
    _noun("key keys", "llave llaves", "f", "object portable"),
    _noun("door doors", "puerta puertas", "f", "object openable"),
    _noun("window windows", "ventana ventanas", "f", "object openable fragile"),
    _noun("bag bags", "bolsa bolsas", "f", "object portable openable container"),
    _noun("hat hats", "sombrero sombreros", "m", "object portable"),
    _noun("shoe shoes", "zapato zapatos", "m", "object portable"),
    _noun("pencil pencils", "lápiz lápices", "m", "object portable"),
    _noun("flower flowers", "flor flores", "f", "object portable"),
    _noun("tree trees", "árbol árboles", "m", "plant cover"),
    _noun("bed beds", "cama camas", "f", "object surface cover"),
    _noun("bicycle bicycles", "bicicleta bicicletas", "f", "object"),
    _noun("clock clocks", "reloj relojes", "m", "object portable fragile"),
    _noun("toy toys", "juguete juguetes", "m", "object portable"),
    _noun("phone phones", "teléfono teléfonos", "m", "object portable fragile"),
    _noun("glass glasses", "vaso vasos", "m", "object portable fragile container"),
    _noun("plate plates", "plato platos", "m", "object portable fragile"),
    _noun("shirt shirts", "camisa camisas", "f", "object portable"),
    _noun("coat coats", "abrigo abrigos", "m", "object portable"),
    _noun("boat boats", "barco barcos", "m", "object"),
    _noun("map maps", "mapa mapas", "m", "object portable"),
    _noun("lamp lamps", "lámpara lámparas", "f", "object portable fragile"),
    _noun("bottle bottles", "botella botellas", "f", "object portable fragile container"),
    _noun("basket baskets", "cesta cestas", "f", "object portable container"),
)

ADJECTIVES = (
    _adjective("blue", "azul azul azules azules", "ser", "object"),
    _adjective("red", "rojo roja rojos rojas", "ser", "object"),
    _adjective("black", "negro negra negros negras", "ser", "object animal"),
    _adjective("white", "blanco blanca blancos blancas", "ser", "object animal"),
    _adjective("green", "verde verde verdes verdes", "ser", "object plant"),
    _adjective("yellow", "amarillo amarilla amarillos amarillas", "ser", "object"),
    _adjective("brown", "marrón marrón marrones marrones", "ser", "object animal"),
    _adjective("big", "grande grande grandes grandes", "ser", "object animal place plant"),
    _adjective("small", "pequeño pequeña pequeños pequeñas", "ser",
               "object animal place plant"),
    _adjective("tall", "alto alta altos altas", "ser", "person plant"),
    _adjective("old", "viejo vieja viejos viejas", "ser", "person animal object place plant"),
    _adjective("new", "nuevo nueva nuevos nuevas", "ser", "object place"),
    _adjective("young", "joven joven jóvenes jóvenes", "ser", "person animal"),
    _adjective("beautiful", "bonito bonita bonitos bonitas", "ser",
               "object animal place plant"),
    _adjective("heavy", "pesado pesada pesados pesadas", "ser", "object"),
    _adjective("cheap", "barato barata baratos baratas", "ser", "object food"),
    _adjective("expensive", "caro cara caros caras", "ser", "object food drink"),
    _adjective("fast", "rápido rápida rápidos rápidas", "ser", "person animal"),
    _adjective("slow", "lento lenta lentos lentas", "ser", "person animal"),
    _adjective("strong", "fuerte fuerte fuertes fuertes", "ser", "person animal"),
    _adjective("intelligent", "inteligente inteligente inteligentes inteligentes", "ser",
               "person animal"),
    _adjective("kind", "amable amable amables amables", "ser", "person"),
    _adjective("delicious", "delicioso deliciosa deliciosos deliciosas", "ser", "food drink"),
    _adjective("sweet", "dulce dulce dulces dulces", "ser", "food drink"),
    _adjective("tired", "cansado cansada cansados cansadas", "estar", "person animal"),
    _adjective("happy", "feliz feliz felices felices", "estar", "person animal"),
    _adjective("sad", "triste triste tristes tristes", "estar", "person animal"),
    _adjective("hungry", "hambriento hambrienta hambrientos hambrientas", "estar",
               "person animal"),
    _adjective("thirsty", "sediento sedienta sedientos sedientas", "estar", "person animal"),
    _adjective("angry", "enfadado enfadada enfadados enfadadas", "estar", "person animal"),
    _adjective("sick", "enfermo enferma enfermos enfermas", "estar", "person animal"),
    _adjective("scared", "asustado asustada asustados asustadas", "estar", "person animal"),
    _adjective("busy", "ocupado ocupada ocupados ocupadas", "estar", "person"),
    _adjective("dirty", "sucio sucia sucios sucias", "estar", "person animal object place"),
    _adjective("clean", "limpio limpia limpios limpias", "estar", "object place"),
    _adjective("open", "abierto abierta abiertos abiertas", "estar", "openable"),
    _adjective("closed", "cerrado cerrada cerrados cerradas", "estar", "openable"),
    _adjective("broken", "roto rota rotos rotas", "estar", "fragile"),
    _adjective("empty", "vacío vacía vacíos vacías", "estar", "container place"),
    _adjective("full", "lleno llena llenos llenas", "estar", "container place"),
    _adjective("wet", "mojado mojada mojados mojadas", "estar", "person animal object"),
    _adjective("cold", "frío fría fríos frías", "estar", "food drink"),
    _adjective("hot", "caliente caliente calientes calientes", "estar", "food drink"),
)

_OBJECTS = "portable food drink"
VERBS = (
    _verb("eat eats ate", "come comen comió comieron comerá comerán",
          "transitive", "person animal", "food"),
    _verb("drink drinks drank", "bebe beben bebió bebieron beberá beberán",
          "transitive", "person animal", "drink"),
    _verb("see sees saw", "ve ven vio vieron verá verán",
          "transitive", "person animal", "person animal object plant"),
    _verb("have has had", "tiene tienen tuvo tuvieron tendrá tendrán",
          "transitive", "person", "portable"),
    _verb("make makes made", "hace hacen hizo hicieron hará harán",
          "transitive", "person", "dish"),
    _verb("find finds found", "encuentra encuentran encontró encontraron encontrará encontrarán",
          "transitive", "person animal", "person animal portable"),
    _verb("bring brings brought", "trae traen trajo trajeron traerá traerán",
          "transitive", "person animal", _OBJECTS),
    _verb("buy buys bought", "compra compran compró compraron comprará comprarán",
          "transitive", "person", _OBJECTS),
    _verb("sell sells sold", "vende venden vendió vendieron venderá venderán",
          "transitive", "person", _OBJECTS),
    _verb("break breaks broke", "rompe rompen rompió rompieron romperá romperán",
          "transitive", "person animal", "fragile"),
    _verb("write writes wrote", "escribe escriben escribió escribieron escribirá escribirán",
          "transitive", "person", "text"),
    _verb("carry carries carried", "lleva llevan llevó llevaron llevará llevarán",
          "transitive", "person animal", _OBJECTS),
    _verb("throw throws threw", "lanza lanzan lanzó lanzaron lanzará lanzarán",
          "transitive", "person", "portable"),
    _verb("catch catches caught", "atrapa atrapan atrapó atraparon atrapará atraparán",
          "transitive", "person animal", "animal portable"),
    _verb("wash washes washed", "lava lavan lavó lavaron lavará lavarán",
          "transitive", "person", "animal object"),
    _verb("open opens opened", "abre abren abrió abrieron abrirá abrirán",
          "transitive", "person", "openable"),
    _verb("close closes closed", "cierra cierran cerró cerraron cerrará cerrarán",
          "transitive", "person", "openable"),
    _verb("cross crosses crossed", "cruza cruzan cruzó cruzaron cruzará cruzarán",
          "transitive", "person animal", "crossable"),
    _verb("visit visits visited", "visita visitan visitó visitaron visitará visitarán",
          "transitive", "person", "person building"),
    _verb("help helps helped", "ayuda ayudan ayudó ayudaron ayudará ayudarán",
          "transitive", "person animal", "person animal"),
    _verb("follow follows followed", "sigue siguen siguió siguieron seguirá seguirán",
          "transitive", "person animal", "person animal"),
    _verb("hear hears heard", "oye oyen oyó oyeron oirá oirán",
          "transitive", "person animal", "person animal"),
    _verb("paint paints painted", "pinta pintan pintó pintaron pintará pintarán",
          "transitive", "person", "object building"),
    _verb("walk walks walked", "camina caminan caminó caminaron caminará caminarán",
          "motion", "person animal", "place"),
    _verb("run runs ran", "corre corren corrió corrieron correrá correrán",
          "motion", "person animal", "place"),
    _verb("go goes went", "va van fue fueron irá irán",
          "motion", "person animal", "place"),
    _verb("come comes came", "viene vienen vino vinieron vendrá vendrán",
          "motion", "person animal", "place"),
    _verb("return returns returned", "vuelve vuelven volvió volvieron volverá volverán",
          "motion", "person animal", "place"),
    _verb("sleep sleeps slept", "duerme duermen durmió durmieron dormirá dormirán",
          "activity", "person animal", "place"),
    _verb("play plays played", "juega juegan jugó jugaron jugará jugarán",
          "activity", "person animal", "place"),
    _verb("swim swims swam", "nada nadan nadó nadaron nadará nadarán",
          "activity", "person animal", "water"),
    _verb("work works worked", "trabaja trabajan trabajó trabajaron trabajará trabajarán",
          "activity", "person", "building"),
    _verb("sing sings sang", "canta cantan cantó cantaron cantará cantarán",
          "activity", "person", "place"),
)

PREPOSITIONS = (
    Preposition("in", ("en",), frozenset({"place"})),
    Preposition("on", ("sobre",), frozenset({"surface"})),
    Preposition("under", ("debajo", "de"), frozenset({"cover"})),
    Preposition("near", ("cerca", "de"), frozenset({"place", "cover"})),
)

ARTICLES = {("m", False): "el", ("f", False): "la", ("m", True): "los", ("f", True): "las"}

# Present, past (the imperfect: "was tired" is "estaba cansado") and future, sg and pl.
COPULAS = {
    "ser": ("es", "son", "era", "eran", "será", "serán"),
    "estar": ("está", "están", "estaba", "estaban", "estará", "estarán"),
}
