"""fio's arithmetic in option values: ``size=(2*1024)k``, ``size=8*$mb_memory``.

fio's HOWTO ("Job file parameters"): anywhere a number is expected, an
expression in parentheses may be used, with ``+ - * / %`` and ``^``
(power); a unit may follow the closing parenthesis; for times, the
expression's unit is microseconds. Its keywords (``$mb_memory``...) allow
the same arithmetic without parentheses. Evaluated here with Python's
``ast`` restricted to numbers and those operators (no names, calls or
attributes), so a value can never run code.
"""

from __future__ import annotations

import ast
import operator
import re
from functools import lru_cache
from typing import Callable, Optional, Union

Number = Union[int, float]

_OPS: dict[type, Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_PARENS = re.compile(r"^\((?P<expr>.*)\)(?P<unit>[A-Za-z]*)$")
_PLAIN_MATH = re.compile(r"^[\d\s.+\-*/%^()]+$")


class ExprError(ValueError):
    """An expression that is not fio arithmetic (the message says why)."""


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ExprError("exponent too large")
        try:
            return _OPS[type(node.op)](left, right)
        except ZeroDivisionError:
            raise ExprError("division by zero") from None
    raise ExprError("only numbers and + - * / % ^ are allowed")


def evaluate(expr: str) -> str:
    """``"2*1024"`` → ``"2048"``; a non-integral result keeps its fraction."""
    try:
        tree = ast.parse(expr.replace("^", "**"), mode="eval")
    except SyntaxError:
        raise ExprError(f"'{expr}' is not an arithmetic expression") from None
    value = _eval(tree)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def expand(value: str, *, had_keyword: bool, time_option: bool) -> Optional[str]:
    """The value with fio's arithmetic done, or None when it has none.

    ``(expr)unit``: evaluated, the unit kept (µs appended for a time option
    without one, fio's rule). Plain ``8*16000`` only where a keyword was
    substituted into it (so ranges such as ``4k-64k`` stay as they are).
    """
    m = _PARENS.match(value.strip())
    if m:
        unit = m.group("unit") or ("us" if time_option else "")
        return evaluate(m.group("expr")) + unit
    if had_keyword and _PLAIN_MATH.match(value) and re.search(r"\d\s*[+\-*/%^]\s*\d", value):
        return evaluate(value)
    return None


@lru_cache(maxsize=1)
def time_options() -> frozenset[str]:
    """Options whose values are times (names and aliases): the engine's table's
    and those handled around the engine (``steadystate_duration``…), so an
    expression is in µs for every time option alike."""
    from iolab import _native
    from iolab.jobs.extras import extra_rows

    rows = [*_native.option_table(), *extra_rows()]
    return frozenset(n for o in rows if o["type"] == "time" for n in (o["name"], *o["aliases"]))
