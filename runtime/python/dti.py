# SPDX-License-Identifier: LGPL-2.1
"""Read DTI (Linux Driver Tracing Interface) records from Python, through
libdti (libdti.so.0) and the standard library's ctypes.

    import dti
    recs = dti.load("/var/tmp/mydrv.snap")          # a snapshot: list of dicts
    for rec in dti.Reader.channel("mydrv", priority=(0, 3)):
        print(rec["ts_ns"], rec["cpu"], rec.get("text"))

A record is a dict: ts_ns, cpu, level, seq (None for a pending record),
flags, caller (the address), source and offset (where it was read), and
text (str) for a text record; data (bytes) for a binary one; event (its
type's name), id and fields (a dict of the typed values: int, str or
bytes) for an event of a registered type that its format decodes.  The
filters are libdti's (dti_filter_*): levels, CPU lists, times, a regular
expression, a field expression.  Errors raise DTIError with libdti's
message (file and offset).

What `dti decode` reports comes to the caller too:

- Lost records come in the iteration, where they were lost (before the
  record after them), as a dict without ts_ns: lost (how many records:
  a gap in the CPU's sequence numbers; None where a live channel's
  record still being written was skipped, bytes saying how many bytes),
  cpu, from_seq and to_seq (the first missing sequence number and that
  of the record after the gap), source, offset and message (the line
  `dti decode` prints).  Tell them apart with `"lost" in rec`.  The
  filter's CPUs hold for them, as for `dti decode -c`.
- Damaged input raises DTIDamageError (a DTIError, errno EBADMSG) with
  the message `dti decode` prints, after the records before the damage.
  With on_damage=callable, the callable gets each DTIDamageError instead
  and reading goes on past the damage as `dti decode` does (it may raise
  to stop).
- Suspicious input that is read as it is (a CPU's file given twice, a
  reused snapshot directory, a sequence going backwards) is a warning of
  category DTIWarning (the warnings module), with `dti decode`'s message.

The layouts below follow <dti/libdti.h>; libdti's ABI is checked by
abidiff against a baseline, so they hold for libdti.so.0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import warnings
from typing import Callable, Iterator

__all__ = ["DTIError", "DTIDamageError", "DTIWarning", "Reader", "load", "LEVELS"]

LEVELS = ("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug")

# <dti/dti_record.h> record flags, <dti/libdti.h> open flags and field types
REC_TEXT, REC_PENDING, REC_TYPED = 0x01, 0x10, 0x40
OPEN_FOLLOW, OPEN_RESET, OPEN_STRICT = 0x1, 0x2, 0x4
FIELD_INT, FIELD_UINT, FIELD_PTR, FIELD_STR, FIELD_BYTES = range(5)
TIME_BOOT, TIME_FIRST, TIME_LAST = range(3)
# <dti/libdti.h> enum dti_notice_type
NOTICE_GAP, NOTICE_BACKWARDS, NOTICE_SKIPPED, NOTICE_DAMAGE, NOTICE_WARNING = range(5)


class DTIError(OSError):
    """A libdti call failed: errno and libdti's message."""


class DTIDamageError(DTIError):
    """Damaged input (libdti's DTI_NOTICE_DAMAGE, or the first damage of a
    strict reader): errno EBADMSG (EPROTO: a record version libdti does not
    know), strerror the message `dti decode` prints ("trace0: corrupt data at
    offset 176: ...; 816 bytes skipped ..."); source, offset, cpu and skipped
    (bytes) where libdti told them, else None."""

    def __init__(self, err: int, message: str, source=None, offset=None, cpu=None,
                 skipped=None):
        super().__init__(err, message)
        self.source, self.offset, self.cpu, self.skipped = source, offset, cpu, skipped


class DTIWarning(UserWarning):
    """Suspicious input that libdti read as it is (DTI_NOTICE_WARNING), or a
    sequence number going backwards: `dti decode`'s warning."""


class _Rec(ctypes.Structure):
    _fields_ = [("cpu", ctypes.c_uint), ("level", ctypes.c_int), ("flags", ctypes.c_uint),
                ("seq", ctypes.c_uint64), ("ts_ns", ctypes.c_uint64),
                ("caller", ctypes.c_uint64), ("payload", ctypes.c_void_p),
                ("len", ctypes.c_size_t), ("raw", ctypes.c_void_p),
                ("raw_len", ctypes.c_size_t), ("source", ctypes.c_char_p),
                ("offset", ctypes.c_uint64), ("swapped", ctypes.c_int),
                ("buf_cpu", ctypes.c_uint32), ("raw_version", ctypes.c_uint32),
                ("reserved", ctypes.c_uint64 * 5)]


class _Field(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int), ("size", ctypes.c_uint),
                ("i", ctypes.c_int64), ("u", ctypes.c_uint64), ("data", ctypes.c_void_p),
                ("len", ctypes.c_size_t), ("reserved", ctypes.c_uint64 * 4)]


class _Notice(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("cpu", ctypes.c_uint), ("from_seq", ctypes.c_uint64),
                ("to_seq", ctypes.c_uint64), ("count", ctypes.c_uint64),
                ("source", ctypes.c_char_p), ("offset", ctypes.c_uint64),
                ("message", ctypes.c_char_p)]


_NOTICE_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Notice), ctypes.c_void_p)


def _library(path: str | None = None) -> ctypes.CDLL:
    """libdti.so.0: @path, $DTI_LIBDTI, or where the dynamic linker finds it."""
    name = path or os.environ.get("DTI_LIBDTI") or "libdti.so.0"
    lib = ctypes.CDLL(name, use_errno=True)
    vp, cp, i, u = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint
    sigs = {
        "dti_errmsg": (cp, []),
        "dti_open_dir": (vp, [cp, u]),
        "dti_open_channel": (vp, [cp, u]),
        "dti_open_previous": (vp, [cp, u]),
        "dti_open_files": (vp, [ctypes.POINTER(cp), u, u]),
        "dti_close": (None, [vp]),
        "dti_next": (i, [vp, ctypes.POINTER(_Rec)]),
        "dti_filter_new": (vp, []),
        "dti_filter_free": (None, [vp]),
        "dti_filter_levels": (i, [vp, i, i]),
        "dti_filter_priority": (i, [vp, cp]),
        "dti_filter_cpus": (i, [vp, cp]),
        "dti_filter_since": (i, [vp, i, ctypes.c_int64]),
        "dti_filter_until": (i, [vp, i, ctypes.c_int64]),
        "dti_time_parse": (i, [cp, ctypes.POINTER(i), ctypes.POINTER(ctypes.c_int64)]),
        "dti_filter_grep": (i, [vp, cp, u]),
        "dti_filter_expr": (i, [vp, cp]),
        "dti_set_filter": (i, [vp, vp]),
        "dti_event_info": (i, [vp, ctypes.POINTER(_Rec), ctypes.POINTER(cp),
                               ctypes.POINTER(u)]),
        "dti_event_field": (i, [vp, ctypes.POINTER(_Rec), u, ctypes.POINTER(_Field)]),
        "dti_blob_info": (i, [ctypes.POINTER(_Rec), ctypes.POINTER(vp),
                              ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(vp),
                              ctypes.POINTER(ctypes.c_size_t)]),
        "dti_damage_count": (ctypes.c_ulong, [vp]),
        "dti_set_notice_handler": (i, [vp, _NOTICE_FN, vp]),
        "dti_merge_new": (vp, []),
        "dti_merge_add": (i, [vp, vp, cp]),
        "dti_merge_last": (i, [vp]),
        "dti_merge_name": (cp, [vp, u]),
    }
    for fn, (res, args) in sigs.items():
        f = getattr(lib, fn)
        f.restype, f.argtypes = res, args
    return lib


_lib: ctypes.CDLL | None = None


def _get_lib() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        _lib = _library()
    return _lib


def _fail(lib: ctypes.CDLL, what: str) -> DTIError:
    err = ctypes.get_errno()
    return DTIError(err, f"{what}: {lib.dti_errmsg().decode(errors='replace')}")


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode(errors="replace")


class Reader:
    """Records of one channel merged by time (libdti's struct dti_reader).

    Open with Reader.dir(), .files(), .channel() or .previous(), several as
    one timeline with Reader.merge(); the keyword
    filters are those of `dti read`: cpus="0,2-3", priority="err" or
    "warning..err" (as dti -p) or (0, 3) (levels from, to), since/until as `dti --since` takes them ("12.5", "+2s",
    "-500ms"), grep="regex", expr="status != 0 && len > 4096".

    Lost records, damage and warnings come as the module's docstring says:
    lost-record dicts in the iteration, DTIDamageError raised (or given to
    on_damage=callable, and reading goes on), DTIWarning warnings.
    """

    def __init__(self, handle: int, lib: ctypes.CDLL, merge: bool = False,
                 on_damage: Callable[[DTIDamageError], None] | None = None, **filters):
        self._r, self._lib, self._f, self._merge = handle, lib, None, merge
        self._on_damage, self._notices = on_damage, []
        # libdti calls it within dti_next(): kept, and only collects
        self._notice_fn = _NOTICE_FN(self._collect)
        lib.dti_set_notice_handler(handle, self._notice_fn, None)
        if any(v is not None for v in filters.values()):
            self._set_filter(**filters)

    def _collect(self, n, _arg) -> None:
        n = n.contents
        self._notices.append((n.type, n.cpu, n.from_seq, n.to_seq, n.count,
                              _text(n.source), n.offset, _text(n.message)))

    @classmethod
    def merge(cls, readers, on_damage=None, **filters) -> "Reader":
        """Several readers (each of one channel, not read yet) as one
        timeline, as `dti read A B` and `dti decode DIR1 DIR2`: libdti's
        merge, which takes them over (they are closed with it).  Each
        record has "channel"; the filters hold for the merged records, and
        the merge's on_damage for all (the readers' own are not used)."""
        readers = list(readers)
        lib = readers[0]._lib if readers else _get_lib()
        m = lib.dti_merge_new()
        if not m:
            raise _fail(lib, "merge")
        merged = cls(m, lib, merge=True, on_damage=on_damage)
        for r in readers:
            if lib.dti_merge_add(m, r._r, None) < 0:
                raise _fail(lib, "merge")
            r._r = None                 # the merge's now
        if any(v is not None for v in filters.values()):
            merged._set_filter(**filters)
        return merged

    @classmethod
    def _open(cls, fn: str, what: str, *args, lib=None, **kw) -> "Reader":
        lib = lib or _get_lib()
        r = getattr(lib, fn)(*args)
        if not r:
            raise _fail(lib, what)
        return cls(r, lib, **kw)

    @classmethod
    def dir(cls, path, strict: bool = False, **filters) -> "Reader":
        """A snapshot directory (trace0..N, info, stats), as dti decode DIR."""
        return cls._open("dti_open_dir", str(path), os.fsencode(path),
                         OPEN_STRICT if strict else 0, **filters)

    @classmethod
    def files(cls, paths, strict: bool = False, **filters) -> "Reader":
        """Per-CPU files, one per CPU, as dti decode FILE..."""
        enc = [os.fsencode(p) for p in paths]
        arr = (ctypes.c_char_p * len(enc))(*enc)
        return cls._open("dti_open_files", ", ".join(map(str, paths)), arr, len(enc),
                         OPEN_STRICT if strict else 0, **filters)

    @classmethod
    def channel(cls, name: str, reset: bool = True, **filters) -> "Reader":
        """A live channel under <debugfs>/dti (root), as dti read NAME."""
        return cls._open("dti_open_channel", name, name.encode(),
                         OPEN_RESET if reset else 0, **filters)

    @classmethod
    def previous(cls, name: str, **filters) -> "Reader":
        """What the previous boot left of persistent channel @name."""
        return cls._open("dti_open_previous", name, name.encode(), 0, **filters)

    def _set_filter(self, cpus=None, priority=None, since=None, until=None, grep=None,
                    expr=None) -> None:
        lib = self._lib
        f = lib.dti_filter_new()
        if not f:
            raise _fail(lib, "filter")
        self._f = f

        def check(ret: int, what: str) -> None:
            if ret < 0:
                raise _fail(lib, what)

        if isinstance(priority, str):       # "err", "warning..err", as dti -p
            check(lib.dti_filter_priority(f, priority.encode()), "priority")
        elif priority is not None:
            lo, hi = priority if isinstance(priority, tuple) else (0, priority)
            check(lib.dti_filter_levels(f, _level(lo), _level(hi)), "priority")
        if cpus is not None:
            check(lib.dti_filter_cpus(f, str(cpus).encode()), "cpus")
        for text, setter in ((since, lib.dti_filter_since), (until, lib.dti_filter_until)):
            if text is not None:
                base, ns = ctypes.c_int(), ctypes.c_int64()
                check(lib.dti_time_parse(str(text).encode(), ctypes.byref(base),
                                         ctypes.byref(ns)), "time")
                check(setter(f, base.value, ns.value), "time")
        if grep is not None:
            check(lib.dti_filter_grep(f, grep.encode(), 0), "grep")
        if expr is not None:
            check(lib.dti_filter_expr(f, expr.encode()), "expr")
        check(lib.dti_set_filter(self._r, f), "filter")

    def __iter__(self) -> Iterator[dict]:
        rec = _Rec()
        while True:
            ret = self._lib.dti_next(self._r, ctypes.byref(rec))
            err = ctypes.get_errno()
            d = self._dict(rec) if ret > 0 else None     # before the notices' yields
            yield from self._told()
            if ret < 0:
                if err in (errno.EBADMSG, errno.EPROTO):    # strict: the first damage
                    raise DTIDamageError(err, self._lib.dti_errmsg().decode(errors="replace"))
                raise _fail(self._lib, "reading")
            if ret == 0:
                return
            yield d

    def _told(self) -> Iterator[dict]:
        """The notices libdti gave during the last dti_next(), in order."""
        notices, self._notices = self._notices, []
        for kind, cpu, from_seq, to_seq, count, source, offset, message in notices:
            if kind in (NOTICE_GAP, NOTICE_SKIPPED):
                d = {"lost": count if kind == NOTICE_GAP else None, "cpu": cpu,
                     "from_seq": from_seq if kind == NOTICE_GAP else None,
                     "to_seq": to_seq if kind == NOTICE_GAP else None,
                     "source": source, "offset": offset, "message": message}
                if kind == NOTICE_SKIPPED:
                    d["bytes"] = count
                yield d
            elif kind == NOTICE_DAMAGE:
                e = DTIDamageError(errno.EBADMSG, message, source, offset, cpu, count)
                if self._on_damage is None:
                    raise e
                self._on_damage(e)
            elif kind in (NOTICE_WARNING, NOTICE_BACKWARDS):
                warnings.warn(message, DTIWarning, stacklevel=3)

    def _dict(self, rec: _Rec) -> dict:
        d = {"ts_ns": rec.ts_ns, "cpu": rec.cpu, "level": rec.level,
             "seq": None if rec.flags & REC_PENDING else rec.seq, "flags": rec.flags,
             "caller": rec.caller, "source": rec.source.decode(errors="replace"),
             "offset": rec.offset}
        if self._merge:
            name = self._lib.dti_merge_name(self._r, self._lib.dti_merge_last(self._r))
            d["channel"] = name.decode(errors="replace") if name else None
        payload = ctypes.string_at(rec.payload, rec.len) if rec.len else b""
        if rec.flags & REC_TYPED and (self._blob(rec, d) or self._event(rec, d)):
            return d
        if rec.flags & REC_TEXT:
            d["text"] = payload.decode(errors="replace")
        else:
            d["data"] = payload
        return d

    def _blob(self, rec: _Rec, d: dict) -> bool:
        """A blob's media type and bytes into @d; False if @rec is no blob."""
        mt, mt_len = ctypes.c_void_p(), ctypes.c_size_t()
        data, n = ctypes.c_void_p(), ctypes.c_size_t()
        if self._lib.dti_blob_info(ctypes.byref(rec), ctypes.byref(mt), ctypes.byref(mt_len),
                                   ctypes.byref(data), ctypes.byref(n)) < 0:
            return False
        d.update(event="blob", media_type=ctypes.string_at(mt, mt_len.value).decode(
            errors="replace"), data=ctypes.string_at(data, n.value) if n.value else b"")
        return True

    def _event(self, rec: _Rec, d: dict) -> bool:
        """The event's type and fields into @d; False if no format decodes it."""
        lib, name, n = self._lib, ctypes.c_char_p(), ctypes.c_uint()
        ev_id = lib.dti_event_info(self._r, ctypes.byref(rec), ctypes.byref(name),
                                   ctypes.byref(n))
        if ev_id < 0:
            return False
        fields, fld = {}, _Field()
        for i in range(n.value):
            if lib.dti_event_field(self._r, ctypes.byref(rec), i, ctypes.byref(fld)) < 0:
                return False            # values that do not fill the layout: binary
            if fld.type == FIELD_INT:
                v = fld.i
            elif fld.type in (FIELD_UINT, FIELD_PTR):
                v = fld.u
            else:
                b = ctypes.string_at(fld.data, fld.len) if fld.len else b""
                v = b.decode(errors="replace") if fld.type == FIELD_STR else b
            fields[fld.name.decode()] = v
        d.update(event=name.value.decode(), id=ev_id, fields=fields)
        return True

    @property
    def damage(self) -> int:
        """Damaged places skipped so far (libdti's DTI_NOTICE_DAMAGE count)."""
        return self._lib.dti_damage_count(self._r)

    def close(self) -> None:
        if self._r:
            self._lib.dti_close(self._r)
            self._r = None
        if self._f:
            self._lib.dti_filter_free(self._f)
            self._f = None

    def __enter__(self) -> "Reader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def _level(v) -> int:
    return LEVELS.index(v.lower()) if isinstance(v, str) else int(v)


def load(path, on_damage=None, **filters) -> list[dict]:
    """Every record of a snapshot directory (or one per-CPU file) as a list
    of dicts, lost records among them ("lost" in the dict); damage raises
    DTIDamageError unless on_damage takes it (see the module's docstring)."""
    opener = Reader.dir if os.path.isdir(path) else (lambda p, **f: Reader.files([p], **f))
    with opener(path, on_damage=on_damage, **filters) as r:
        return list(r)
