"""A corpus of hostile and careless study files, each with the fragment its one-line error must contain.

Every value here once passed `study plan` and broke `study run`, wrote
outside the output folder, ran as code under Slurm, or took minutes and
gigabytes to load; or it is a misspelling that used to be accepted silently.
Keys are case names; values are (file bytes, expected fragment of the message).
"""

from __future__ import annotations

BASE = """name: demo
applications:
  app:
    command: [./app, --size, "{size}"]
    env: {QUIET: "1"}
axes:
  ranks: [1, 2]
  custom: {size: [tiny]}
"""


def _base(old: str, new: str) -> bytes:
    assert old in BASE
    return BASE.replace(old, new).encode()


def _env(name: str, value: str = '"1"') -> bytes:
    return _base('env: {QUIET: "1"}', f"env: {{{name}: {value}}}")


def _command(arg: str) -> bytes:
    return _base('"{size}"', arg)


def _alias_bomb(levels: int, width: int) -> bytes:
    lines = ['a0: &a0 ["x"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return (BASE + "\n".join(f"x_{line}" for line in lines) + "\n").replace("x_a", "a").encode()


def _deep(kind: str, depth: int) -> bytes:
    body = "[" * depth + "]" * depth if kind == "list" else "{a: " * depth + "1" + "}" * depth
    return BASE.encode() + f"description: {body}\n".encode()


def _custom_axes(count: int, values: int) -> bytes:
    axes = ", ".join(f"c{i}: [{', '.join(str(v) for v in range(values))}]" for i in range(count))
    return _base("custom: {size: [tiny]}", f"custom: {{size: [tiny], {axes}}}")


CORPUS: dict[str, tuple[bytes, str]] = {
    # Values that crashed `study run` after passing `study plan` (runs stuck `running`).
    "env_name_with_equals": (_env('"A=B"'), "environment name 'A=B' must be letters"),
    "env_value_nul": (_env("QUIET", '"a\\0b"'), "applications.app.env.QUIET: NUL characters are not allowed"),
    "format_spec_on_string": (_command('"{size:d}"'), "placeholder {size:d}: only plain {name} placeholders"),
    "conversion": (_command('"{ranks!z}"'), "placeholder {ranks!z}: only plain"),
    "conversion_r": (_command('"{ranks!r}"'), "placeholder {ranks!r}: only plain"),
    "huge_padding": (_command('"{ranks:>3000000000}"'), "placeholder {ranks:>3000000000}: only plain"),
    "timeout_inf": (BASE.encode() + b"timeout: .inf\n", "timeout: expected seconds between 0 and 604,800"),
    "timeout_nan": (BASE.encode() + b"timeout: .nan\n", "timeout: expected seconds between 0"),
    "timeout_negative": (BASE.encode() + b"timeout: -5\n", "timeout: expected seconds between 0"),
    "timeout_year": (BASE.encode() + b"timeout: 31536000\n", "timeout: expected seconds between 0"),
    "build_timeout_zero": (BASE.encode() + b"build_timeout: 0\n", "build_timeout: expected seconds"),
    "pending_limit_inf": (BASE.encode() + b"slurm: {pending_limit: .inf}\n", "slurm.pending_limit: expected seconds"),
    # Code through the environment: bash imports BASH_FUNC_<name>%% as a function.
    "bash_function_env": (_env('"BASH_FUNC_date%%"', '"() { touch /tmp/pwned; }"'),
                          "names starting with BASH_FUNC_ are bash functions"),
    "bash_function_prefix_only": (_env("BASH_FUNC_x"), "names starting with BASH_FUNC_ are bash functions"),
    "env_name_dollar": (_env('"A$B"'), "environment name 'A$B'"),
    "env_name_digit_first": (_env('"1A"'), "environment name '1A'"),
    "env_value_mapping": (_env("QUIET", "{a: 1}"), "value of 'QUIET' must be a string or number"),
    "env_value_huge": (_env("QUIET", '"' + "x" * 40000 + '"'), "value of 'QUIET' is 40,000 characters long"),
    "mca_name_space": (BASE.encode() + b"parameter_sets:\n  p:\n    mca: {'btl tcp': 1}\n",
                       "environment name 'btl tcp'"),
    "cvar_name_equals": (BASE.encode() + b"transports:\n  t:\n    cvars: {'X=1': 1}\n", "environment name 'X=1'"),
    "mpich_env_bash_function": (BASE.encode() + b"transports:\n  t:\n    mpich_env: {'BASH_FUNC_ls%%': '() { :; }'}\n",
                                "bash functions"),
    "variant_env_bad": (_base("    env:", "    variants: {v: {env: {'a-b': 1}}}\n    env:"), "environment name 'a-b'"),
    # Names become folders: no separators, no dot first, a bounded length.
    "app_name_dotdot": (_base("  app:", '  "../../escape":'), "applications.../../escape: an application name must"),
    "app_name_slash": (_base("  app:", '  "a/b":'), "an application name must be 1-64 letters"),
    "app_name_dot_first": (_base("  app:", '  ".hidden":'), "an application name must"),
    "app_name_empty": (_base("  app:", '  "":'), "an application name must"),
    "app_name_long": (_base("  app:", "  " + "a" * 65 + ":"), "an application name must"),
    "app_name_escape": (_base("  app:", '  "a\\e[31m":'), "an application name must"),
    "variant_name_dotdot": (_base("    env:", '    variants: {"..": {}}\n    env:'), "a variant name must"),
    "transport_name_slash": (BASE.encode() + b"transports:\n  'x/y': {}\n", "transports.x/y: a settings name must"),
    "params_name_in_axis": (_base("ranks: [1, 2]", 'ranks: [1, 2]\n  params: ["../p"]'), "a transport or parameter"),
    "study_name_space": (_base("name: demo", "name: my study"), "name: name must be 1-64 letters"),
    # The loader itself: aliases, nesting, size, encoding, tags.
    "alias_bomb": (_alias_bomb(9, 9), "expands to more than 100,000 values"),  # 1 KB, 9**9 values expanded
    "alias_many": (_alias_bomb(12, 9), "more than 100 YAML aliases"),
    "deep_lists": (_deep("list", 1000), "nested deeper than 32 levels"),
    "deep_maps": (_deep("map", 1000), "nested deeper than 32 levels"),
    "huge_file": (BASE.encode() + b"description: '" + b"x" * (1024 * 1024) + b"'\n", "too large for a study file"),
    "not_utf8": (BASE.encode() + b"description: \xff\xfe\n", "not UTF-8 text"),
    "python_tag": (BASE.encode() + b"description: !!python/object/apply:os.system [id]\n", "unsupported YAML tag"),
    "nul_in_key": (BASE.encode() + b'"desc\\0ription": x\n', "NUL characters are not allowed"),
    "top_level_scalar": (b"just text\n", "a study file must be a mapping of keys"),
    "duplicate_app_key": (_base("    env:", "    command: [x]\n    env:"), "applications.app.command: duplicate key"),
    # Sizes: counts and plans with sane bounds.
    "repetitions_huge": (BASE.encode() + b"repetitions: 10000000\n", "repetitions"),
    "ten_million_runs": (_custom_axes(10, 5), "the plan has 19,531,250 runs"),
    "over_default_limit": (_custom_axes(2, 100), "more than the limit of 10,000; narrow the axes or raise 'max_runs:'"),
    "max_runs_above_ceiling": (BASE.encode() + b"max_runs: 100000000\n", "max_runs"),
    "ranks_huge": (_base("ranks: [1, 2]", "ranks: [1, 1000000000000]"), "positive integers up to 10,000,000"),
    "threads_huge": (_base("ranks: [1, 2]", "ranks: [1, 2]\n  threads: [100000]"), "up to 4,096"),
    "nodes_zero": (_base("ranks: [1, 2]", "ranks: [1, 2]\n  nodes: [0]"), "expected a list of positive integers"),
    "argument_huge": (_command('"' + "y" * 40000 + '"'), "an argument is 40,000 characters long"),
    "custom_value_huge": (_base("[tiny]", '["' + "z" * 40000 + '"]'), "at most 32,768 characters"),
    # Placeholders that reach into Python objects.
    "attribute_access": (_command('"{app.__class__}"'), "unknown placeholder {app.__class__}"),
    "index_access": (_command('"{ranks[0]}"'), "unknown placeholder {ranks[0]}"),
    "empty_placeholder": (_command('"{}"'), "unknown placeholder {}"),
    "unbalanced_brace": (_command('"{ranks"'), "malformed placeholder"),
    "interconnect_placeholder_unswept": (_command('"{interconnect}"'), "unknown placeholder {interconnect}"),
    # Misspellings and undeclared axes.
    "misspelt_axis": (_base("ranks: [1, 2]", "rank: [1, 2, 4]"), "axes.rank: unknown key (did you mean 'ranks'?)"),
    "undeclared_custom_axis": (_base("ranks: [1, 2]", "ranks: [1, 2]\n  colour: [red]"),
                               "declare your own axis under axes.custom"),
    "misspelt_top_key": (BASE.encode() + b"repetiton: 2\n", "did you mean 'repetitions'?"),
    "misspelt_app_key": (_base("    env:", "    bulid: [[make]]\n    env:"), "did you mean 'build'?"),
    "misspelt_fom_key": (_base("    env:", "    fom: {sorce: wall}\n    env:"), "did you mean 'source'?"),
    "misspelt_slurm_key": (BASE.encode() + b"slurm: {partiton: debug}\n", "did you mean 'partition'?"),
    "misspelt_settings_key": (BASE.encode() + b"transports:\n  t: {mcaa: {btl: tcp}}\n", "did you mean 'mca'?"),
    "custom_axis_shadows_standard": (_base("custom: {size: [tiny]}", "custom: {size: [tiny], ranks: [3]}"),
                                     "custom axis names must be identifiers not used by scalewise"),
    "custom_axis_bad_name": (_base("custom: {size: [tiny]}", "custom: {size: [tiny], 'a-b': [1]}"),
                             "custom axis names must be identifiers"),
    "custom_value_mapping": (_base("[tiny]", "[{a: 1}]"), "axis values must be strings or numbers"),
    "interconnect_unknown": (_base("ranks: [1, 2]", "ranks: [1, 2]\n  interconnect: [warp9]"),
                             "link rate 'warp9' is neither a preset"),
    "interconnect_number": (_base("ranks: [1, 2]", "ranks: [1, 2]\n  interconnect: [10]"), "expected a list of names"),
}
