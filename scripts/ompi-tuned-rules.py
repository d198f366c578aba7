#!/usr/bin/env python3
"""Turn Open MPI's coll/tuned fixed decision functions into data.

Reads ompi/mca/coll/tuned/coll_tuned_decision_fixed.c (the if/else chains
that pick `alg`) and writes them as nested JSON rules that
scalewise.whatif.collectives.openmpi evaluates:
    rule := int (the algorithm) | [condition, rule-if-true, rule-if-false]
Usage: ompi-tuned-rules.py coll_tuned_decision_fixed.c SOURCE-LABEL > rules.json
"""

import json
import re
import sys

FUNC = re.compile(r"ompi_coll_tuned_(\w+?)_intra_dec_fixed\s*\(")
DECISION = re.compile(r"if\s*\(\s*(!\s*ompi_op_is_commute|communicator_size)")
TOKEN = re.compile(r"\}\s*else\s+if\s*\((?P<elif>[^{]*)\)\s*\{|\}\s*else\s*\{|if\s*\((?P<if>[^{]*)\)\s*\{"
                   r"|alg\s*=\s*(?P<alg>\d+)\s*;|\}")


def strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", text, flags=re.S), flags=re.S)


def condition(text: str) -> str:
    return " ".join(text.split()).replace("( ", "(").replace(" )", ")")


def parse_chain(tokens, i):
    """tokens[i] is an `if` (or an `else if`): parse the chain to its last
    closing brace; return the rule and the index after it."""
    cond = tokens[i][1]
    body, i = parse_body(tokens, i + 1)
    kind = tokens[i][0]
    if kind == "elif":
        other, i = parse_chain(tokens, i)
    elif kind == "else":
        other, i = parse_body(tokens, i + 1)
        assert tokens[i][0] == "close", tokens[i]
        i += 1
    else:
        assert kind == "close", tokens[i]
        other, i = None, i + 1
    return [cond, body, other], i


def parse_body(tokens, i):
    """A block's content: `alg = N;` or a nested chain; stops at the brace that ends it."""
    if tokens[i][0] == "alg":
        return tokens[i][1], i + 1
    return parse_chain(tokens, i)


def tokenize(body: str):
    out = []
    for m in TOKEN.finditer(body):
        if m.group("elif") is not None:
            out.append(("elif", condition(m.group("elif"))))
        elif m.group("if") is not None:
            out.append(("if", condition(m.group("if"))))
        elif m.group("alg") is not None:
            out.append(("alg", int(m.group("alg"))))
        elif m.group(0).startswith("}") and "else" in m.group(0):
            out.append(("else", None))
        else:
            out.append(("close", None))
    return out


def main() -> None:
    text = strip_comments(open(sys.argv[1]).read())
    rules = {"source": sys.argv[2]}
    for m in FUNC.finditer(text):
        # the decision is the chain that tests the communicator or the operation
        start = DECISION.search(text, m.end()).start()
        end = text.index("return", start)
        tokens = tokenize(text[start:end])
        rule, _ = parse_body(tokens, 0)
        rules[m.group(1)] = rule
    json.dump(rules, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
