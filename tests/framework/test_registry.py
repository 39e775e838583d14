"""The registry: discovery through entry points, attribution, duplicates, broken plugins and the switches.

Third-party plugins are simulated with FAKE DISTRIBUTIONS (``*.dist-info`` folders with METADATA and
entry_points.txt, plus plugin modules) written into tmp_path and put on sys.path: the same path pip installs take.
"""

from __future__ import annotations

import pytest

import tokembed
from tokembed.errors import PluginError, UnknownComponentError
from tokembed.registry import KINDS, build_registry

TOKENIZER_PLUGIN = """
    from tokembed import Tokenizer, hookimpl

    class {cls}(Tokenizer):
        name = "{name}"

    @hookimpl
    def tokembed_register_tokenizers():
        return [{cls}]
"""


def tokenizer_plugin(name: str, cls: str = "FakeTokenizer") -> str:
    return TOKENIZER_PLUGIN.format(name=name, cls=cls)


def own(reg, kind="tokenizer"):
    """name -> distribution of the registered components of ``kind``."""
    return {info.name: info.plugin.distribution for info in reg.all(kind)}


# -- the installed environment --------------------------------------------------------------------------------------
def test_installed_environment_builds_without_failures():
    reg = build_registry()
    assert reg.failures == []
    assert own(reg)["char"] == "tokembed"
    info = reg.info("tokenizer", "char")
    assert info.target == "tokembed.plugins.char.tokenizer:CharTokenizer"
    assert info.plugin.name == "char" and info.plugin.target == "tokembed.plugins.char"
    assert info.plugin.version == tokembed.__version__


def test_example_third_party_plugin_is_installed_and_attributed():
    reg = build_registry()
    assert "reverse" in reg.names("tokenizer"), (
        "the example plugin is not installed: pip install -e examples/tokembed-reverse (the Makefile does)"
    )
    info = reg.info("tokenizer", "reverse")
    assert info.plugin.distribution == "tokembed-reverse"
    assert info.plugin.version == "0.1.0"
    assert info.as_dict() == {
        "name": "reverse", "kind": "tokenizer", "distribution": "tokembed-reverse", "version": "0.1.0",
        "plugin": "reverse", "module": "tokembed_reverse.tokenizer", "class": "ReverseTokenizer",
    }


def test_builtins_come_first_and_listing_is_sorted():
    reg = build_registry()
    assert reg.plugins[0].distribution == "tokembed"
    for kind in KINDS:
        assert reg.names(kind) == sorted(reg.names(kind))
        assert [i.name for i in reg.all(kind)] == reg.names(kind)
    assert [i.kind for i in reg.all()] == sorted((i.kind for i in reg.all()), key=list(KINDS).index)


def test_registry_is_built_fresh_each_call(fake_dists):
    before = build_registry()
    fake_dists.module("fake_late", tokenizer_plugin("late"))
    fake_dists.dist("fake-late", {"late": "fake_late"})
    after = build_registry()
    assert "late" not in before.names("tokenizer")
    assert own(after)["late"] == "fake-late"


# -- duplicates -----------------------------------------------------------------------------------------------------
def test_two_distributions_giving_one_name_is_an_error_naming_both(fake_dists):
    fake_dists.module("fake_dup_a", tokenizer_plugin("dup", "AlphaTokenizer"))
    fake_dists.module("fake_dup_b", tokenizer_plugin("dup", "BetaTokenizer"))
    fake_dists.dist("fake-alpha", {"alpha": "fake_dup_a"}, version="1.2")
    fake_dists.dist("fake-beta", {"beta": "fake_dup_b"}, version="3.4")
    with pytest.raises(PluginError) as err:
        build_registry()
    msg = str(err.value)
    assert "tokenizer name 'dup' is registered twice" in msg
    assert "fake-alpha 1.2" in msg and "fake-beta 3.4" in msg
    assert "fake_dup_a:AlphaTokenizer" in msg and "fake_dup_b:BetaTokenizer" in msg
    assert "plugin 'alpha'" in msg and "plugin 'beta'" in msg
    # blocking either one resolves the clash
    assert own(build_registry(blocked=["fake-beta"]))["dup"] == "fake-alpha"
    assert own(build_registry(blocked=["alpha"]))["dup"] == "fake-beta"


def test_a_third_party_claiming_a_builtin_name_is_an_error(fake_dists):
    fake_dists.module("fake_char", tokenizer_plugin("char", "MyChar"))
    fake_dists.dist("fake-char", {"mychar": "fake_char"})
    with pytest.raises(PluginError, match=r"'char' is registered twice: by distribution tokembed .*fake-char"):
        build_registry()


def test_same_entry_point_seen_twice_is_one_plugin(fake_dists):
    # an editable install listed twice, a lib64 -> lib link: two identical dist-info folders on two sys.path entries
    fake_dists.module("fake_twice", tokenizer_plugin("twice"), site="site1")
    fake_dists.dist("fake-twice", {"twice": "fake_twice"}, site="site1")
    fake_dists.dist("fake-twice", {"twice": "fake_twice"}, site="site2")
    import importlib.metadata as md

    seen = [d for d in md.distributions() if d.metadata["Name"] == "fake-twice"]
    assert len(seen) == 2  # the situation is real: importlib.metadata lists both
    reg = build_registry()
    assert reg.failures == []
    assert own(reg)["twice"] == "fake-twice"
    assert [p.name for p in reg.plugins if p.distribution == "fake-twice"] == ["twice"]


def test_one_plugin_registering_the_same_class_twice_is_not_a_clash(fake_dists):
    fake_dists.module("fake_repeat", """
        from tokembed import Tokenizer, hookimpl

        class Repeat(Tokenizer):
            name = "repeat"

        @hookimpl
        def tokembed_register_tokenizers():
            return [Repeat, Repeat]
    """)
    fake_dists.dist("fake-repeat", {"repeat": "fake_repeat"})
    assert own(build_registry())["repeat"] == "fake-repeat"


# -- broken plugins -------------------------------------------------------------------------------------------------
def test_plugin_that_fails_to_import_is_reported_and_others_load(fake_dists):
    fake_dists.module("fake_broken", """
        raise ImportError("needs libfoo, which is not installed")
    """)
    fake_dists.module("fake_good", tokenizer_plugin("good"))
    fake_dists.dist("fake-broken", {"broken": "fake_broken"}, version="0.3")
    fake_dists.dist("fake-good", {"good": "fake_good"})
    fake_dists.dist("fake-missing", {"missing": "fake_no_such_module"})
    reg = build_registry()
    assert own(reg)["good"] == "fake-good" and own(reg)["char"] == "tokembed"
    by_dist = {f.plugin.distribution: f for f in reg.failures}
    assert set(by_dist) == {"fake-broken", "fake-missing"}
    broken = by_dist["fake-broken"]
    assert broken.plugin.name == "broken" and broken.plugin.version == "0.3" and broken.plugin.target == "fake_broken"
    assert broken.error == "import failed: ImportError: needs libfoo, which is not installed"
    assert str(broken) == ("plugin 'broken' (fake-broken 0.3, fake_broken) failed: "
                           "import failed: ImportError: needs libfoo, which is not installed")
    assert "ModuleNotFoundError" in by_dist["fake-missing"].error
    # asking for a component names the plugins that failed, since one of them may have been meant to provide it
    with pytest.raises(UnknownComponentError, match="plugins that failed to load: plugin 'broken' .*fake-broken"):
        reg.get("tokenizer", "libfoo")


def test_hook_that_raises_is_reported_and_other_hooks_still_register(fake_dists):
    fake_dists.module("fake_raising", """
        from tokembed import Vectorizer, hookimpl

        class Fine(Vectorizer):
            name = "fine"

        @hookimpl
        def tokembed_register_tokenizers():
            raise RuntimeError("config file missing")

        @hookimpl
        def tokembed_register_vectorizers():
            return [Fine]
    """)
    fake_dists.dist("fake-raising", {"raising": "fake_raising"})
    reg = build_registry()
    assert own(reg, "vectorizer")["fine"] == "fake-raising"
    [failure] = reg.failures
    assert failure.plugin.distribution == "fake-raising"
    assert failure.error == "tokembed_register_tokenizers() raised RuntimeError: config file missing"


@pytest.mark.parametrize(
    ("returned", "problem"),
    [
        ('["char"]', "returned 'char', which is not a subclass of tokembed.Tokenizer"),
        ("[Vec]", "returned <class 'fake_bad_result.Vec'>, which is not a subclass of tokembed.Tokenizer"),
        ("[NoName]", "returned NoName, which has no `name`"),
        ("Named", "must return a list of classes, returned type"),
        ("None", "must return a list of classes, returned NoneType"),
    ],
)
def test_hook_returning_something_else_than_classes_is_reported(fake_dists, returned, problem):
    fake_dists.module("fake_bad_result", f"""
        from tokembed import Tokenizer, Vectorizer, hookimpl

        class Vec(Vectorizer):
            name = "vec"

        class NoName(Tokenizer):
            pass

        class Named(Tokenizer):
            name = "named"

        @hookimpl
        def tokembed_register_tokenizers():
            return {returned}
    """)
    fake_dists.dist("fake-bad-result", {"bad": "fake_bad_result"})
    reg = build_registry()
    [failure] = reg.failures
    assert failure.plugin.distribution == "fake-bad-result"
    assert failure.error.startswith("tokembed_register_tokenizers() ")
    assert problem in failure.error
    assert "named" not in reg.names("tokenizer") and "char" in reg.names("tokenizer")


def test_misspelled_hook_is_an_error_with_did_you_mean(fake_dists):
    fake_dists.module("fake_typo", """
        from tokembed import hookimpl

        @hookimpl
        def tokembed_register_tokenizer():
            return []
    """)
    fake_dists.dist("fake-typo", {"typo": "fake_typo"}, version="2.0")
    with pytest.raises(PluginError) as err:
        build_registry()
    msg = str(err.value)
    assert "plugin 'typo' (fake-typo 2.0, fake_typo)" in msg
    assert "implements a hook that does not exist: tokembed_register_tokenizer." in msg
    assert "Did you mean 'tokembed_register_tokenizers'?" in msg
    assert "-p no:NAME" in msg
    # the switch the message suggests works
    assert "char" in build_registry(blocked=["typo"]).names("tokenizer")


def test_hook_with_arguments_the_spec_does_not_have_is_reported(fake_dists):
    fake_dists.module("fake_args", """
        from tokembed import hookimpl

        @hookimpl
        def tokembed_register_tokenizers(config):
            return []
    """)
    fake_dists.dist("fake-args", {"args": "fake_args"})
    reg = build_registry()
    [failure] = reg.failures
    assert failure.plugin.distribution == "fake-args"
    assert "PluginValidationError" in failure.error and "config" in failure.error


# -- switches -------------------------------------------------------------------------------------------------------
@pytest.fixture
def third_party(fake_dists):
    fake_dists.module("fake_third", tokenizer_plugin("third"))
    fake_dists.dist("Fake_Third.Party", {"thirdep": "fake_third"})
    return fake_dists


@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_autoload_disabled_by_environment_keeps_only_builtins(third_party, monkeypatch, value):
    assert "third" in build_registry().names("tokenizer")
    monkeypatch.setenv("TOKEMBED_DISABLE_PLUGIN_AUTOLOAD", value)
    reg = build_registry()
    assert "third" not in reg.names("tokenizer") and "reverse" not in reg.names("tokenizer")
    assert "char" in reg.names("tokenizer")
    assert {p.distribution for p in reg.plugins} == {"tokembed"}
    # an explicit argument wins over the environment
    assert "third" in build_registry(autoload=True).names("tokenizer")


@pytest.mark.parametrize("value", ["", "0", "false", "off"])
def test_autoload_environment_values_that_mean_no(third_party, monkeypatch, value):
    monkeypatch.setenv("TOKEMBED_DISABLE_PLUGIN_AUTOLOAD", value)
    assert "third" in build_registry().names("tokenizer")


def test_autoload_false_keeps_only_builtins(third_party):
    reg = build_registry(autoload=False)
    assert "third" not in reg.names("tokenizer")
    assert "char" in reg.names("tokenizer")
    assert reg.failures == []


def test_autoload_false_still_takes_explicit_plugins(third_party):
    import fake_third

    reg = build_registry(autoload=False, plugins=[fake_third])
    info = reg.info("tokenizer", "third")
    assert info.plugin.distribution is None and info.plugin.name == "fake_third"


@pytest.mark.parametrize("blocked", ["thirdep", "Fake_Third.Party", "fake-third-party", "FAKE_THIRD_PARTY"])
def test_block_list_by_entry_point_or_distribution_name(third_party, blocked):
    reg = build_registry(blocked=[blocked])
    assert "third" not in reg.names("tokenizer")
    assert "char" in reg.names("tokenizer")


def test_block_list_can_block_a_builtin(third_party):
    reg = build_registry(blocked=["char"])
    assert "char" not in reg.names("tokenizer")
    assert "third" in reg.names("tokenizer")


def test_plugins_named_in_environment_are_registered(fake_dists, monkeypatch):
    fake_dists.module("fake_env_a", tokenizer_plugin("env-a"))
    fake_dists.module("fake_env_b", tokenizer_plugin("env-b"))
    monkeypatch.setenv("TOKEMBED_PLUGINS", " fake_env_a , fake_env_b,,fake_env_nowhere")
    reg = build_registry()
    assert reg.info("tokenizer", "env-a").plugin.distribution is None
    assert "env-b" in reg.names("tokenizer")
    [failure] = reg.failures
    assert failure.plugin.name == "fake_env_nowhere" and "ModuleNotFoundError" in failure.error
    assert "env-a" not in build_registry(blocked=["fake_env_a"]).names("tokenizer")


def test_an_explicit_plugin_already_loaded_from_its_entry_point_is_not_registered_twice(third_party):
    import fake_third

    reg = build_registry(plugins=[fake_third, "fake_third"])
    assert reg.info("tokenizer", "third").plugin.distribution == "Fake_Third.Party"
    assert len([p for p in reg.plugins if p.target == "fake_third"]) == 1


# -- lookups --------------------------------------------------------------------------------------------------------
def test_get_returns_the_class():
    from tokembed.plugins.char.tokenizer import CharTokenizer

    assert build_registry().get("tokenizer", "char") is CharTokenizer


def test_get_unknown_name_suggests_and_lists():
    reg = build_registry()
    with pytest.raises(UnknownComponentError) as err:
        reg.get("tokenizer", "chra")
    msg = str(err.value)
    assert msg.startswith("unknown tokenizer 'chra'. Did you mean 'char'?")
    assert f"Available: {', '.join(reg.names('tokenizer'))}" in msg
    assert isinstance(err.value, KeyError) and isinstance(err.value, tokembed.TokembedError)


def test_get_unknown_name_without_close_match_has_no_suggestion():
    with pytest.raises(UnknownComponentError) as err:
        build_registry().get("tokenizer", "zzzzzzzz")
    assert "Did you mean" not in str(err.value) and "Available: " in str(err.value)


def test_get_unknown_kind():
    message = "unknown kind 'tokeniser'; kinds are: tokenizer, vectorizer, embedder"
    with pytest.raises(UnknownComponentError, match=message):
        build_registry().get("tokeniser", "char")


def test_catalogue_is_read_from_the_package():
    reg = build_registry()
    assert reg.catalogue["tokenizers"]["char"]["plugin"] == "char"
    assert isinstance(reg.presets, dict)


def test_blocking_a_name_no_plugin_has_is_a_warning():
    with pytest.warns(UserWarning, match="-p no:no-such-plugin: no installed plugin has that entry-point"):
        reg = build_registry(blocked=["no-such-plugin"])
    assert "char" in reg.names("tokenizer")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "char" not in build_registry(blocked=["char"]).names("tokenizer")  # a real name: no warning
