from fisk_ai.tools.fiskapp.model import ApplicationModel


def test_unknown_keys_from_newer_fisk_are_ignored() -> None:
    model = ApplicationModel.model_validate(
        {
            "name": "app",
            "future_field": {"x": 1},
            "commands": [
                {"name": "ls", "help": "list", "brand_new": True, "restricted_schema": {}}
            ],
        }
    )

    assert model.commands[0].name == "ls"


def test_null_lists_read_as_empty() -> None:
    model = ApplicationModel.model_validate(
        {"name": "app", "flags": None, "commands": [{"name": "ls", "tags": None, "flags": None}]}
    )

    assert model.flags == ()
    assert model.commands[0].tags == ()


def test_restricted_schema_is_preferred_over_schema() -> None:
    model = ApplicationModel.model_validate(
        {
            "commands": [
                {"name": "a", "schema": {"type": "object", "x": 1}, "restricted_schema": {"y": 2}},
                {"name": "b", "schema": {"type": "object"}},
            ]
        }
    )

    assert model.commands[0].input_schema == {"y": 2}
    assert model.commands[1].input_schema == {"type": "object"}


def test_flag_fields_decode() -> None:
    model = ApplicationModel.model_validate(
        {
            "flags": [
                {
                    "name": "verbose",
                    "help": "more",
                    "short": 118,
                    "default": ["false"],
                    "boolean": True,
                    "negatable": True,
                    "cumulative": False,
                    "completions": ["a"],
                }
            ]
        }
    )

    flag = model.flags[0]
    assert (flag.name, flag.short, flag.default, flag.boolean, flag.negatable) == (
        "verbose",
        118,
        ("false",),
        True,
        True,
    )
