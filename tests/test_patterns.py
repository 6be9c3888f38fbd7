import pytest

from torchmemlint.patterns import PathPattern, last_match, parse_gitignore


@pytest.mark.parametrize("pattern, path, is_dir, expected", [
    ("build", "build", True, True),
    ("build", "src/build", True, True),
    ("build", "src/builder", True, False),
    ("*.egg-info", "pkg.egg-info", True, True),
    ("*.py", "a/b/c.py", False, True),
    ("*.py", "a/b/c.pyc", False, False),
    ("/top.py", "top.py", False, True),
    ("/top.py", "sub/top.py", False, False),
    ("docs/*.py", "docs/conf.py", False, True),
    ("docs/*.py", "docs/sub/conf.py", False, False),
    ("docs/*.py", "x/docs/conf.py", False, False),  # a middle slash anchors
    ("a/**/b", "a/b", True, True),
    ("a/**/b", "a/x/y/b", True, True),
    ("**/gen", "deep/er/gen", True, True),
    ("gen/**", "gen/x/y.py", False, True),
    ("gen/**", "gen", True, False),
    ("out/", "out", True, True),
    ("out/", "out", False, False),
    ("test_?.py", "test_a.py", False, True),
    ("test_?.py", "test_ab.py", False, False),
    ("[abc].py", "b.py", False, True),
    ("[!abc].py", "b.py", False, False),
    ("[!abc].py", "d.py", False, True),
    ("a**b.py", "aXXb.py", False, True),  # not a whole segment: an ordinary star
    ("a**b.py", "a/b.py", False, False),
    ("\\*.py", "*.py", False, True),
    ("\\*.py", "x.py", False, False),
])
def test_glob_semantics(pattern, path, is_dir, expected):
    assert PathPattern.compile(pattern).matches(path, is_dir) is expected


def test_gitignore_comments_negation_escapes_and_last_match_wins():
    patterns = parse_gitignore(
        "# generated code\n"
        "\n"
        "*.py\n"
        "!keep.py\n"
        "\\#hash.py\n"
        "\\!bang.py\n"
        "trailing.py   \n"
    )

    def ignored(path):
        match = last_match(patterns, path, False)
        return match is not None and not match.negated
    assert ignored("gen.py")
    assert not ignored("keep.py")
    assert ignored("#hash.py") and ignored("!bang.py")
    assert [p.text for p in patterns][-1] == "trailing.py"


@pytest.mark.parametrize("pattern", ["/", "", "[z-a].py"])
def test_malformed_pattern_is_a_value_error(pattern):
    with pytest.raises(ValueError):
        PathPattern.compile(pattern)


def test_malformed_gitignore_lines_are_skipped():
    assert [p.text for p in parse_gitignore("/\n!\n[z-a].py\nok.py\n")] == ["ok.py"]
