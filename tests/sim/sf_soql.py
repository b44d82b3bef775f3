# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""The SOQL subset the Salesforce simulator understands: tokenizer, parser, evaluator.

    SELECT <field, ... | FIELDS(ALL) | COUNT()> FROM <Object>
      [WHERE <expr>] [GROUP BY <field, ...>]
      [ORDER BY <field> [ASC|DESC] [NULLS FIRST|LAST], ...] [LIMIT <n>] [OFFSET <n>]

    <expr>    := <and> {OR <and>}              (AND binds tighter than OR)
    <and>     := <not> {AND <not>}
    <not>     := NOT <not> | ( <expr> ) | <field> <op> <literal>
               | <field> [NOT] IN ( <literal>, ... ) | <field> [NOT] LIKE '<pattern>'
    <op>      := = | != | <> | < | <= | > | >=
    <literal> := 'quoted' (escapes \\' \\\\ \\" \\n \\r \\t \\b \\f \\_ \\%)
               | YYYY-MM-DDTHH:MM:SS[.fff](Z|+hh:mm|-hh:mm)   (dateTime, never quoted)
               | YYYY-MM-DD | 12 | -1.5 | true | false | null

Values in a Table are Python values: datetime (aware, UTC, millisecond precision), date, str,
int, float, bool, None, or a Lazy (resolved on first use). Field and object names are
case-insensitive; string comparisons are case-sensitive (ids sort bytewise, as the client
does). Errors raise SoqlError(error_code, message) with Salesforce's codes: MALFORMED_QUERY,
INVALID_FIELD, INVALID_TYPE, BIG_OBJECT_UNSUPPORTED_OPERATION.
"""

import datetime as _dt
import re

UTC = _dt.timezone.utc

KEYWORDS = {"SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "IN", "LIKE", "GROUP", "BY", "ORDER",
            "ASC", "DESC", "NULLS", "FIRST", "LAST", "LIMIT", "OFFSET"}

FIELDS_LIMIT = 200


class SoqlError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class Lazy:
    """A field value computed on first use (e.g. the length of a generated log file)."""

    def __init__(self, fn):
        self._fn = fn
        self._done = False
        self._value = None

    def resolve(self):
        if not self._done:
            self._value = self._fn()
            self._done = True
        return self._value


def value_of(rec, field):
    v = rec.get(field)
    if isinstance(v, Lazy):
        v = v.resolve()
    return v


# --- datetimes --------------------------------------------------------------------------

_ISO_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
                     r"(Z|[+-]\d{2}:?\d{2})?$")
_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def parse_iso(text):
    """ISO-8601 with Z, +hh:mm, +hhmm or no zone (UTC) → aware UTC datetime (ms); else None."""
    m = _ISO_RE.match(text)
    if m is None:
        return None
    y, mo, d, h, mi, s, frac, zone = m.groups()
    ms = int((frac or "0")[:3].ljust(3, "0"))
    try:
        value = _dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), ms * 1000,
                             tzinfo=UTC)
    except ValueError:
        return None
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        value -= sign * _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return value


def parse_date(text):
    m = _DATE_RE.match(text)
    if m is None:
        return None
    try:
        return _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def normalize_value(v):
    """JSON input value → table value (ISO strings become datetimes, YYYY-MM-DD dates)."""
    if isinstance(v, str):
        t = parse_iso(v)
        if t is not None:
            return t
        d = parse_date(v)
        if d is not None:
            return d
    return v


def format_sf_datetime(t):
    """Salesforce's REST form: 2026-06-30T01:00:00.000+0000."""
    t = t.astimezone(UTC)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03d+0000" % (
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.microsecond // 1000)


def type_of(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, _dt.datetime):
        return "datetime"
    if isinstance(v, _dt.date):
        return "date"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "object"


# --- tables -----------------------------------------------------------------------------

class Table:
    """One sObject: records plus a schema inferred from them (first non-null value's type)."""

    def __init__(self, name, big_object=False, timestamp_field=None):
        self.name = name
        self.big_object = big_object
        self.timestamp_field = timestamp_field
        self.records = []
        self.by_id = {}
        self.fields = []
        self.lower = {}
        self.types = {}

    def declare(self, field, typ=None):
        key = field.lower()
        if key not in self.lower:
            self.lower[key] = field
            self.fields.append(field)
            self.types[field] = typ
        elif typ is not None and self.types[self.lower[key]] is None:
            self.types[self.lower[key]] = typ

    def upsert(self, rec):
        for k, v in rec.items():
            self.declare(k, None if isinstance(v, Lazy) else type_of(v))
        rid = rec.get("Id")
        if rid is not None and rid in self.by_id:
            idx = self.by_id[rid]
            self.records[idx] = rec
        else:
            if rid is not None:
                self.by_id[rid] = len(self.records)
            self.records.append(rec)

    def resolve_field(self, name):
        canon = self.lower.get(name.lower())
        if canon is None:
            raise SoqlError("INVALID_FIELD",
                            f"No such column '{name}' on entity '{self.name}'. If you are "
                            "attempting to use a custom field, be sure to append the '__c' "
                            "after the custom field name. Please reference your WSDL or the "
                            "describe call for the appropriate names.")
        return canon


# --- tokenizer --------------------------------------------------------------------------

_DT_TOKEN = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")
_DT_PREFIX = re.compile(r"\d{4}-\d{2}-\d{2}T")
_DATE_TOKEN = re.compile(r"\d{4}-\d{2}-\d{2}")
_NUM_TOKEN = re.compile(r"-?\d+(?:\.\d+)?")
_IDENT_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_ESCAPES = {"'": "'", "\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t", "b": "\b",
            "f": "\f", "_": "\\_", "%": "\\%"}


class Tok:
    __slots__ = ("kind", "value", "pos", "text")

    def __init__(self, kind, value, pos, text):
        self.kind = kind    # IDENT STRING DATETIME DATE NUMBER OP PUNCT EOF
        self.value = value
        self.pos = pos
        self.text = text

    def is_kw(self, word):
        return self.kind == "IDENT" and self.value.upper() == word


def _malformed(text, pos, what):
    return SoqlError("MALFORMED_QUERY", f"\n{text}\nERROR at Row:1:Column:{pos + 1}\n{what}")


def tokenize(text):
    toks = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        start = i
        if c == "'":
            i += 1
            out = []
            while True:
                if i >= n:
                    raise _malformed(text, start, "unterminated string literal")
                c = text[i]
                if c == "\\":
                    if i + 1 >= n or text[i + 1] not in _ESCAPES:
                        raise _malformed(text, i, "Invalid string literal: bad escape sequence")
                    out.append(_ESCAPES[text[i + 1]])
                    i += 2
                elif c == "'":
                    i += 1
                    break
                else:
                    out.append(c)
                    i += 1
            toks.append(Tok("STRING", "".join(out), start, text[start:i]))
            continue
        if c.isdigit() or (c == "-" and i + 1 < n and text[i + 1].isdigit()):
            m = _DT_TOKEN.match(text, i)
            if m and not (m.end() < n and (text[m.end()].isalnum() or text[m.end()] in ".:")):
                toks.append(Tok("DATETIME", parse_iso(m.group(0)), start, m.group(0)))
                i = m.end()
                continue
            if _DT_PREFIX.match(text, i):
                end = i
                while end < n and text[end] not in " \t\r\n),":
                    end += 1
                raise _malformed(text, start,
                                 f"line 1:{start} no viable alternative at character "
                                 f"'{text[start:end]}' (dateTime literals need Z or +hh:mm)")
            m = _DATE_TOKEN.match(text, i)
            if m and not (m.end() < n and text[m.end()].isalnum()):
                d = parse_date(m.group(0))
                if d is None:
                    raise _malformed(text, start, f"invalid date '{m.group(0)}'")
                toks.append(Tok("DATE", d, start, m.group(0)))
                i = m.end()
                continue
            m = _NUM_TOKEN.match(text, i)
            if m and not (m.end() < n and (text[m.end()].isalpha() or text[m.end()] == "_")):
                s = m.group(0)
                toks.append(Tok("NUMBER", float(s) if "." in s else int(s), start, s))
                i = m.end()
                continue
            raise _malformed(text, start, f"unexpected token: '{c}'")
        m = _IDENT_TOKEN.match(text, i)
        if m:
            toks.append(Tok("IDENT", m.group(0), start, m.group(0)))
            i = m.end()
            continue
        for op in ("!=", "<>", "<=", ">=", "=", "<", ">"):
            if text.startswith(op, i):
                toks.append(Tok("OP", "!=" if op == "<>" else op, start, op))
                i += len(op)
                break
        else:
            if c in "(),":
                toks.append(Tok("PUNCT", c, start, c))
                i += 1
            else:
                raise _malformed(text, start, f"unexpected token: '{c}'")
    toks.append(Tok("EOF", None, n, "<EOF>"))
    return toks


# --- parser -----------------------------------------------------------------------------

class Query:
    def __init__(self):
        self.text = ""
        self.fields = []          # [(name, pos)]
        self.fields_all = False
        self.count_only = False
        self.obj = None
        self.where = None
        self.group_by = []        # [(name, pos)]
        self.order_by = []        # [(name, desc, nulls_last, pos)]
        self.limit = None
        self.offset = None


class _Parser:
    def __init__(self, text):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0

    @property
    def cur(self):
        return self.toks[self.i]

    def advance(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def error(self, tok=None):
        tok = tok or self.cur
        return _malformed(self.text, tok.pos, f"unexpected token: '{tok.text}'")

    def expect_kw(self, word):
        if not self.cur.is_kw(word):
            raise self.error()
        return self.advance()

    def expect_punct(self, ch):
        if self.cur.kind != "PUNCT" or self.cur.value != ch:
            raise self.error()
        return self.advance()

    def ident(self):
        t = self.cur
        if t.kind != "IDENT" or t.value.upper() in KEYWORDS:
            raise self.error()
        self.advance()
        return (t.value, t.pos)

    def parse(self):
        q = Query()
        q.text = self.text
        self.expect_kw("SELECT")
        if self.cur.is_kw("FIELDS") and self.toks[self.i + 1].kind == "PUNCT" \
                and self.toks[self.i + 1].value == "(":
            self.advance()
            self.advance()
            which = self.cur
            if not (which.is_kw("ALL") or which.is_kw("STANDARD") or which.is_kw("CUSTOM")):
                raise self.error()
            self.advance()
            self.expect_punct(")")
            q.fields_all = True
        elif self.cur.is_kw("COUNT") and self.toks[self.i + 1].kind == "PUNCT" \
                and self.toks[self.i + 1].value == "(":
            self.advance()
            self.advance()
            self.expect_punct(")")
            q.count_only = True
        else:
            q.fields.append(self.ident())
            while self.cur.kind == "PUNCT" and self.cur.value == ",":
                self.advance()
                q.fields.append(self.ident())
        self.expect_kw("FROM")
        q.obj = self.ident()
        if self.cur.is_kw("WHERE"):
            self.advance()
            q.where = self.expr()
        if self.cur.is_kw("GROUP"):
            self.advance()
            self.expect_kw("BY")
            q.group_by.append(self.ident())
            while self.cur.kind == "PUNCT" and self.cur.value == ",":
                self.advance()
                q.group_by.append(self.ident())
        if self.cur.is_kw("ORDER"):
            self.advance()
            self.expect_kw("BY")
            while True:
                name, pos = self.ident()
                desc = False
                if self.cur.is_kw("ASC"):
                    self.advance()
                elif self.cur.is_kw("DESC"):
                    self.advance()
                    desc = True
                nulls_last = desc
                if self.cur.is_kw("NULLS"):
                    self.advance()
                    if self.cur.is_kw("FIRST"):
                        nulls_last = False
                    elif self.cur.is_kw("LAST"):
                        nulls_last = True
                    else:
                        raise self.error()
                    self.advance()
                q.order_by.append((name, desc, nulls_last, pos))
                if self.cur.kind == "PUNCT" and self.cur.value == ",":
                    self.advance()
                    continue
                break
        if self.cur.is_kw("LIMIT"):
            self.advance()
            t = self.advance()
            if t.kind != "NUMBER" or not isinstance(t.value, int) or t.value < 0:
                raise self.error(t)
            q.limit = t.value
        if self.cur.is_kw("OFFSET"):
            self.advance()
            t = self.advance()
            if t.kind != "NUMBER" or not isinstance(t.value, int) or t.value < 0:
                raise self.error(t)
            q.offset = t.value
        if self.cur.kind != "EOF":
            raise self.error()
        return q

    def expr(self):
        node = self.and_expr()
        while self.cur.is_kw("OR"):
            self.advance()
            node = ("or", node, self.and_expr())
        return node

    def and_expr(self):
        node = self.not_expr()
        while self.cur.is_kw("AND"):
            self.advance()
            node = ("and", node, self.not_expr())
        return node

    def not_expr(self):
        if self.cur.is_kw("NOT"):
            self.advance()
            return ("not", self.not_expr())
        if self.cur.kind == "PUNCT" and self.cur.value == "(":
            self.advance()
            node = self.expr()
            self.expect_punct(")")
            return node
        field = self.ident()
        negate = False
        if self.cur.is_kw("NOT"):
            self.advance()
            negate = True
            if not (self.cur.is_kw("IN") or self.cur.is_kw("LIKE")):
                raise self.error()
        if self.cur.is_kw("IN"):
            self.advance()
            self.expect_punct("(")
            values = [self.literal()]
            while self.cur.kind == "PUNCT" and self.cur.value == ",":
                self.advance()
                values.append(self.literal())
            self.expect_punct(")")
            return ("in", field, values, negate)
        if self.cur.is_kw("LIKE"):
            self.advance()
            lit = self.literal()
            if lit[0] != "string":
                raise _malformed(self.text, lit[2], "LIKE needs a quoted string")
            return ("like", field, lit, negate)
        if self.cur.kind != "OP":
            raise self.error()
        op = self.advance().value
        return ("cmp", field, op, self.literal())

    def literal(self):
        t = self.advance()
        if t.kind == "STRING":
            return ("string", t.value, t.pos)
        if t.kind == "DATETIME":
            return ("datetime", t.value, t.pos)
        if t.kind == "DATE":
            return ("date", t.value, t.pos)
        if t.kind == "NUMBER":
            return ("number", t.value, t.pos)
        if t.kind == "IDENT":
            w = t.value.upper()
            if w == "TRUE":
                return ("boolean", True, t.pos)
            if w == "FALSE":
                return ("boolean", False, t.pos)
            if w == "NULL":
                return ("null", None, t.pos)
        raise self.error(t)


def parse(text):
    return _Parser(text).parse()


# --- evaluation -------------------------------------------------------------------------

_SF_TYPE_NAMES = {"datetime": "dateTime", "date": "date", "string": "string",
                  "number": "double", "boolean": "boolean"}


def _check_literal(table, field, lit):
    ftype = table.types.get(field)
    ltype = lit[0]
    if ftype is None or ltype == "null" or ftype == "object":
        return
    if ftype != ltype:
        quoted = "should be enclosed in quotes" if ftype == "string" \
            else "should not be enclosed in quotes"
        raise SoqlError("INVALID_FIELD",
                        f"value of filter criterion for field '{field}' must be of type "
                        f"{_SF_TYPE_NAMES.get(ftype, ftype)} and {quoted}")


def _like_regex(pattern):
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("^" + "".join(out) + "$", re.IGNORECASE | re.DOTALL)


def _compile(node, table):
    kind = node[0]
    if kind in ("and", "or"):
        a = _compile(node[1], table)
        b = _compile(node[2], table)
        if kind == "and":
            return lambda r: a(r) and b(r)
        return lambda r: a(r) or b(r)
    if kind == "not":
        a = _compile(node[1], table)
        return lambda r: not a(r)
    field = table.resolve_field(node[1][0])
    if kind == "in":
        _, _, lits, negate = node
        for lit in lits:
            _check_literal(table, field, lit)
        values = [lit[1] for lit in lits]

        def in_pred(r):
            v = value_of(r, field)
            hit = any(_eq(v, x) for x in values)
            return hit != negate
        return in_pred
    if kind == "like":
        _, _, lit, negate = node
        if table.types.get(field) not in (None, "string"):
            raise SoqlError("INVALID_FIELD", f"invalid operator on field '{field}': LIKE")
        rx = _like_regex(lit[1])

        def like_pred(r):
            v = value_of(r, field)
            hit = isinstance(v, str) and rx.match(v) is not None
            return hit != negate
        return like_pred
    _, _, op, lit = node
    _check_literal(table, field, lit)
    want = lit[1]
    if lit[0] == "null":
        if op == "=":
            return lambda r: value_of(r, field) is None
        if op == "!=":
            return lambda r: value_of(r, field) is not None
        raise SoqlError("MALFORMED_QUERY", f"invalid operator on null: {op}")
    if op == "=":
        return lambda r: _eq(value_of(r, field), want)
    if op == "!=":
        return lambda r: not _eq(value_of(r, field), want)
    cmp = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
           ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[op]

    def ord_pred(r):
        v = value_of(r, field)
        if v is None or type_of(v) != type_of(want):
            return False
        return cmp(v, want)
    return ord_pred


def _eq(v, want):
    if v is None or want is None:
        return v is None and want is None
    if type_of(v) != type_of(want):
        return False
    return v == want


_RANK = {"boolean": 0, "number": 1, "date": 2, "datetime": 3, "string": 4, "object": 5}


def _sort_key(v):
    t = type_of(v)
    if t == "object":
        return (5, repr(v))
    return (_RANK[t], v)


class Result:
    def __init__(self, rows, aggregate=False, count=None):
        self.rows = rows              # [(record or None, [(field, value), ...])]
        self.aggregate = aggregate
        self.count = count            # COUNT(): number of matching rows, rows empty


def _big_object_rules(q, table):
    def refuse(why):
        raise SoqlError("BIG_OBJECT_UNSUPPORTED_OPERATION",
                        f"Big Object {table.name}: {why}")
    ts = table.timestamp_field
    if q.group_by:
        refuse("GROUP BY is not supported on big objects")
    if not q.order_by:
        refuse(f"queries must be ORDER BY {ts} DESC")
    if len(q.order_by) > 1:
        refuse("compound ORDER BY is not supported on big objects")
    name, desc, _, _ = q.order_by[0]
    if not desc:
        refuse("ORDER BY ... ASC is not supported on big objects")
    if ts is not None and table.resolve_field(name) != table.resolve_field(ts):
        refuse(f"ORDER BY is only supported on the index field {ts}")


def execute(q, tables):
    """Run a parsed query against {lower name: Table}; returns a Result."""
    table = tables.get(q.obj[0].lower())
    if table is None:
        raise SoqlError("INVALID_TYPE",
                        f"\n{q.text}\nERROR at Row:1:Column:{q.obj[1] + 1}\nsObject type "
                        f"'{q.obj[0]}' is not supported. If you are attempting to use a custom "
                        "object, be sure to append the '__c' after the entity name. Please "
                        "reference your WSDL or the describe call for the appropriate names.")
    if q.fields_all and (q.limit is None or q.limit > FIELDS_LIMIT):
        raise SoqlError("MALFORMED_QUERY",
                        "The SOQL FIELDS function must have a LIMIT of at most 200")
    if q.fields_all and q.group_by:
        raise SoqlError("MALFORMED_QUERY", "FIELDS() cannot be used with GROUP BY")
    selected = [] if q.fields_all or q.count_only else [table.resolve_field(f) for f, _ in q.fields]
    if len({f.lower() for f in selected}) != len(selected):
        raise SoqlError("MALFORMED_QUERY", "duplicate field selected")
    pred = _compile(q.where, table) if q.where is not None else (lambda r: True)
    group = [table.resolve_field(f) for f, _ in q.group_by]
    order = [(table.resolve_field(f), desc, nulls_last) for f, desc, nulls_last, _ in q.order_by]
    if table.big_object:
        _big_object_rules(q, table)
    if group:
        gl = {g.lower() for g in group}
        for f in selected:
            if f.lower() not in gl:
                raise SoqlError("MALFORMED_QUERY",
                                f"Field must be grouped or aggregated: {f}")
        for f, _, _ in order:
            if f.lower() not in gl:
                raise SoqlError("MALFORMED_QUERY",
                                f"Ordered field must be grouped or aggregated: {f}")

    matched = [r for r in table.records if pred(r)]
    if q.count_only:
        return Result([], count=len(matched))

    if group:
        seen = {}
        for r in matched:
            key = tuple(_hashable(value_of(r, g)) for g in group)
            if key not in seen:
                seen[key] = {g: value_of(r, g) for g in group}
        items = list(seen.values())
        getter = (lambda item, f: item.get(f))
    else:
        items = matched
        getter = value_of

    for f, desc, nulls_last in reversed(order):
        nonnull = [it for it in items if getter(it, f) is not None]
        nulls = [it for it in items if getter(it, f) is None]
        nonnull.sort(key=lambda it: _sort_key(getter(it, f)), reverse=desc)
        items = nonnull + nulls if nulls_last else nulls + nonnull

    if q.offset:
        items = items[q.offset:]
    if q.limit is not None:
        items = items[:q.limit]

    if group:
        cols = selected
        return Result([(None, [(f, it.get(f)) for f in cols]) for it in items], aggregate=True)
    rows = []
    for r in items:
        cols = table.fields if q.fields_all else selected
        rows.append((r, [(f, value_of(r, f)) for f in cols]))
    return Result(rows)


def _hashable(v):
    if isinstance(v, (dict, list)):
        return repr(v)
    return v
