"""tokembed.tables: the aligned plain-text tables the command line prints."""

from tokembed.tables import text_table


def test_columns_are_as_wide_as_their_widest_cell_and_aligned_as_asked():
    out = text_table(["name", "n"], [["a", "1,000"], ["longer", "7"]], right=[1])
    # column 0: width 6 ("longer"), left; column 1: width 5 ("1,000"), right; two spaces between
    assert out.splitlines() == ["name        n", "a       1,000", "longer      7"]
    assert text_table(["x", "y"], []) == "x  y"  # the header alone, trailing spaces dropped
