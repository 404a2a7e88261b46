"""The two kinds of wrong translation the long split counts (transformer/data/errors.py)."""

import pytest

from transformer.data.errors import agreement_error, repeated_clause

REFERENCE = "los perros del hombre viejo no cruzaron la calle porque estaban cansados"


@pytest.mark.parametrize("output, agreement, repeated", [
    (REFERENCE, False, False),
    ("los perros del hombre viejo no cruzó la calle porque estaban cansados", True, False),
    ("el perro del hombre viejo no cruzaron la calle porque estaban cansados", True, False),
    ("los perros de los hombres viejos no cruzaron la calle porque estaban cansados",
     True, False),
    ("los perros del hombre viejo cruzaron la calle porque estaban cansados", False, False),
    ("los perros del hombre viejo no cruzarán la calle porque estaban cansados", False, False),
    ("los gatos del hombre viejo no cruzaron la calle porque estaban cansados", False, False),
    ("los perros del hombre viejo no cruzaron la calle porque estaban cansados porque "
     "estaban cansados", False, True),
    ("los perros del hombre viejo y del hombre viejo no cruzaron la calle", False, True),
])
def test_kinds_of_error(output, agreement, repeated):
    assert agreement_error(output, REFERENCE) == agreement
    assert repeated_clause(output, REFERENCE) == repeated


def test_a_repetition_the_reference_makes_is_no_error():
    reference = "la niña y la mujer ven a la niña y la mujer"  # said twice by the source
    assert not repeated_clause(reference, reference)
    assert repeated_clause(reference + " y la niña y la mujer", reference)
