# Copyright 2026 sf2loki contributors
# SPDX-License-Identifier: Apache-2.0
"""Small readers of the query languages deploy/ uses, for the checks next to this file.

- logql(expr): a recursive-descent parser for the LogQL subset the dashboards and Loki rules
  use (range and vector aggregations, binary operators, stream selectors, line filters, json
  with or without parameters, label filters, unwrap). Anything outside it is an error, so a
  typo fails the test instead of passing unread. Returns every log range it read: the
  selector's matchers, the fields a json stage extracts, the labels later stages read, the
  unwrapped label and the range.
- promql_metric_names(expr): the metric names a PromQL expression reads, by a tokenizer that
  drops strings, label matchers, ranges, numbers, functions, keywords and the label lists of
  by/without/on/ignoring/group_left/group_right.
- grafana_expand(expr): Grafana's interval variables replaced by a duration, other $variables
  by a plain word, so both readers see a query as Grafana would send it.
"""

import re

GRAFANA_INTERVALS = ("$__rate_interval", "$__interval", "$__range", "$__auto")


def grafana_expand(expr):
    for name in GRAFANA_INTERVALS:
        expr = expr.replace("${" + name[1:] + "}", "5m").replace(name, "5m")
    expr = re.sub(r"\$\{(\w+)(?::\w+)?\}", r"\1", expr)
    return re.sub(r"\$(\w+)", r"\1", expr)


# --- LogQL ---------------------------------------------------------------------------------

class QueryError(Exception):
    pass


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|`[^`]*`)
  | (?P<duration>\d+(?:\.\d+)?(?:ms|s|m|h|d|w|y)(?:\d+(?:ms|s|m|h|d|w|y))*)
  | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<op>=~|!~|!=|\|=|\|~|==|>=|<=|[=<>(){}\[\],|+\-*/%^])
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
""", re.VERBOSE)

RANGE_FUNCS = {"count_over_time", "rate", "bytes_over_time", "bytes_rate", "absent_over_time",
               "sum_over_time", "avg_over_time", "max_over_time", "min_over_time",
               "first_over_time", "last_over_time", "stdvar_over_time", "stddev_over_time",
               "quantile_over_time", "rate_counter"}
UNWRAP_FUNCS = {"sum_over_time", "avg_over_time", "max_over_time", "min_over_time",
                "first_over_time", "last_over_time", "stdvar_over_time", "stddev_over_time",
                "quantile_over_time", "rate_counter"}
VECTOR_AGGS = {"sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk",
               "sort", "sort_desc"}
BIN_OPS = {"+", "-", "*", "/", "%", "^", "==", "!=", ">", "<", ">=", "<=", "and", "or",
           "unless"}
LABEL_OPS = {"=", "!=", "=~", "!~", "==", ">", "<", ">=", "<="}
LINE_OPS = {"|=", "!=", "|~", "!~"}


def _tokens(text):
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise QueryError(f"unexpected character {text[pos]!r} at {pos}")
        pos = m.end()
        if m.lastgroup != "ws":
            out.append((m.lastgroup, m.group()))
    return out


def _unquote(s):
    if s.startswith("`"):
        return s[1:-1]
    return re.sub(r"\\(.)", r"\1", s[1:-1])


def duration_seconds(text):
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)", text)
    if not parts or "".join(a + b for a, b in parts) != text:
        raise QueryError(f"bad duration {text!r}")
    return sum(float(a) * units[b] for a, b in parts)


class LogRange:
    """One selector with its pipeline and, inside a range function, its range."""

    def __init__(self):
        self.matchers = []          # (label, op, value)
        self.line_filters = []      # (op, value)
        self.extracted = {}         # label -> the JSON key it comes from (None: bare json)
        self.bare_json = False
        self.filtered = []          # labels read by label filters
        self.unwrap = None
        self.range = None           # seconds, or None for a log query
        self.func = None


class _Parser:
    def __init__(self, text):
        self.toks = _tokens(text)
        self.i = 0
        self.ranges = []
        self.grouped = []

    def peek(self, k=0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else (None, None)

    def take(self, value=None, kind=None):
        tk, tv = self.peek()
        if tk is None or (value is not None and tv != value) or (kind is not None and tk != kind):
            want = value or kind
            raise QueryError(f"expected {want!r}, found {tv!r} (token {self.i})")
        self.i += 1
        return tv

    def at(self, value):
        return self.peek()[1] == value

    # query := metric | log
    def query(self):
        if self.at("{"):
            r = self.log_range(allow_range=False)
            self.ranges.append(r)
        else:
            self.metric()
        if self.peek()[0] is not None:
            raise QueryError(f"trailing input at {self.peek()[1]!r}")
        return self.ranges

    def metric(self):
        self.operand()
        while self.peek()[1] in BIN_OPS:
            self.take()
            if self.at("bool"):
                self.take()
            self.operand()

    def grouping(self):
        self.take()
        self.take("(")
        while not self.at(")"):
            self.grouped.append(self.take(kind="ident"))
            if self.at(","):
                self.take()
        self.take(")")

    def operand(self):
        tk, tv = self.peek()
        if tk == "number":
            self.take()
            return
        if tv == "-":
            self.take()
            self.operand()
            return
        if tv == "(":
            self.take()
            self.metric()
            self.take(")")
            return
        if tk == "ident" and tv in RANGE_FUNCS:
            self.take()
            self.take("(")
            if tv == "quantile_over_time":
                self.take(kind="number")
                self.take(",")
            r = self.log_range(allow_range=True)
            r.func = tv
            if tv in UNWRAP_FUNCS and r.unwrap is None:
                raise QueryError(f"{tv} needs an unwrap stage")
            if tv not in UNWRAP_FUNCS and r.unwrap is not None:
                raise QueryError(f"{tv} does not take an unwrap stage")
            self.ranges.append(r)
            self.take(")")
            if self.peek()[1] in ("by", "without"):
                self.grouping()
            return
        if tk == "ident" and tv in VECTOR_AGGS:
            self.take()
            if self.peek()[1] in ("by", "without"):
                self.grouping()
            self.take("(")
            if tv in ("topk", "bottomk"):
                self.take(kind="number")
                self.take(",")
            self.metric()
            self.take(")")
            if self.peek()[1] in ("by", "without"):
                self.grouping()
            return
        raise QueryError(f"unexpected {tv!r} where a metric expression starts")

    def log_range(self, allow_range):
        r = LogRange()
        wrapped = False
        if self.at("("):
            self.take()
            wrapped = True
        self.selector(r)
        self.pipeline(r)
        if wrapped:
            self.take(")")
        if allow_range:
            self.take("[")
            r.range = duration_seconds(self.take(kind="duration"))
            self.take("]")
            if self.at("offset"):
                self.take()
                self.take(kind="duration")
        return r

    def selector(self, r):
        self.take("{")
        while not self.at("}"):
            name = self.take(kind="ident")
            op = self.take()
            if op not in ("=", "!=", "=~", "!~"):
                raise QueryError(f"bad matcher operator {op!r}")
            r.matchers.append((name, op, _unquote(self.take(kind="string"))))
            if self.at(","):
                self.take()
        self.take("}")
        if not any(op in ("=", "=~") and v not in ("", ".*") for _, op, v in r.matchers):
            raise QueryError("a selector needs one matcher that is not empty-compatible")

    def pipeline(self, r):
        while True:
            tv = self.peek()[1]
            if tv in LINE_OPS:
                self.take()
                r.line_filters.append((tv, _unquote(self.take(kind="string"))))
                continue
            if tv != "|":
                return
            self.take()
            stage = self.peek()[1]
            if stage == "json":
                self.take()
                if self.peek()[0] == "ident" and self.peek(1)[1] in ("=", ",", "|", "[", ")"):
                    self.json_params(r)
                else:
                    r.bare_json = True
            elif stage == "logfmt":
                raise QueryError("lines are JSON (docs/sources/README.md): use json, not logfmt")
            elif stage == "unwrap":
                self.take()
                r.unwrap = self.take(kind="ident")
            else:
                self.label_filter(r)

    def json_params(self, r):
        while True:
            label = self.take(kind="ident")
            path = label
            if self.at("="):
                self.take()
                path = _unquote(self.take(kind="string"))
            key = re.split(r"[.\[]", path, 1)[0]
            r.extracted[label] = key
            if not self.at(","):
                return
            self.take()

    def label_filter(self, r):
        while True:
            name = self.take(kind="ident")
            op = self.take()
            if op not in LABEL_OPS:
                raise QueryError(f"bad label filter operator {op!r}")
            kind, _ = self.peek()
            if kind not in ("string", "number", "duration"):
                raise QueryError(f"label filter {name} {op} needs a value")
            self.take()
            r.filtered.append(name)
            if self.peek()[1] in ("and", "or", ","):
                self.take()
                continue
            return


def logql(expr):
    """The log ranges of a LogQL query (see LogRange) and the labels its aggregations group
    by; QueryError when it does not parse."""
    p = _Parser(expr)
    return p.query(), p.grouped


# --- PromQL names --------------------------------------------------------------------------

PROMQL_AGGS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
               "bottomk", "topk", "quantile"}
PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
                   "and", "or", "unless", "offset", "inf", "nan"}
_PROM_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<range>\[[^\]]*\])
  | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:ms|s|m|h|d|w|y)?)
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>[{}(),]|[^\sA-Za-z0-9_:{}(),"'`\[\]]+)
""", re.VERBOSE)


def promql_metric_names(expr):
    toks = []
    pos = 0
    while pos < len(expr):
        m = _PROM_TOKEN.match(expr, pos)
        if not m:
            raise QueryError(f"unexpected character {expr[pos]!r} at {pos}")
        pos = m.end()
        if m.lastgroup not in ("ws", "string", "range", "number"):
            toks.append((m.lastgroup, m.group()))
    names = set()
    depth_braces = 0
    skip_list = False
    for i, (kind, value) in enumerate(toks):
        if value == "{":
            depth_braces += 1
            continue
        if value == "}":
            depth_braces -= 1
            continue
        if skip_list:
            if value == ")":
                skip_list = False
            continue
        if depth_braces or kind != "ident":
            continue
        nxt = toks[i + 1][1] if i + 1 < len(toks) else None
        if value.lower() in PROMQL_KEYWORDS:
            if value in ("by", "without", "on", "ignoring", "group_left", "group_right") and \
                    nxt == "(":
                skip_list = True
            continue
        if nxt == "(" or value in PROMQL_AGGS:
            continue    # a function or an aggregation (whose by clause may come first)
        names.add(value)
    return names
