# The script `ksearch tasks import kernelbench` runs on a problem file, inside the jail
# (ksearch-cc-jail: no network, a scrubbed environment, writes to its exchange folder
# only).  It reads the file with Python's own parser and interprets the little Python a
# KernelBench problem is written in, without running it: module-level sizes (constant
# folding over arithmetic, tuples, *unpacking), Model.__init__ (the modules it builds, from
# get_init_inputs()), get_inputs() (the tensors' shapes and distributions) and forward (a
# graph of tensor operations with symbolic shapes).  From the graph it writes a naive C
# kernel (one loop nest a node), a numpy form of the reference and the task's shapes as
# expressions of the sizes.  Only when forward uses something it does not know, and torch
# is installed, is the problem run once (in the same jail) to learn its output's shape.
#
# argv: exchange folder (problem.py in it, result.json written to it), scale, NAME=VALUE...
import ast
import json
import math
import os
import sys

OUT_DIR = sys.argv[1]
SCALE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
SETS = dict(a.split('=', 1) for a in sys.argv[3:])
SRC = open(os.path.join(OUT_DIR, 'problem.py')).read()
res = {'doc': '', 'params': [], 'inputs': [], 'outputs': None, 'notes': [], 'c': None,
       'numpy': None, 'flops': '0', 'shipped': None, 'ew': None, 'template': None}


class Refuse(Exception):
    pass


def done(err=None, value=False):
    """err: the file is not a problem the importer reads; value: it is, with a bad value"""
    if err:
        res['error'] = err
        res['bad_value'] = value
        for k in ('inputs', 'outputs'):  # what was read before the error: plain values
            res[k] = None
    with open(os.path.join(OUT_DIR, 'result.json'), 'w') as f:
        json.dump(res, f)
    sys.exit(0)


# ---- sizes: a value and the expression of module-level names that made it -------------

class S:
    """an integer size known by value and by expression (a tree of names and numbers)"""
    def __init__(self, v, t):
        self.v, self.t = v, t

    def names(self):
        out, st = set(), [self.t]
        while st:
            t = st.pop()
            if t[0] == 'n':
                out.add(t[1])
            elif t[0] == 'op':
                st += [t[2], t[3]]
        return out

    def text(self, c=False, prec=0, py=False):
        """the expression in task.yaml, in C (c) or in Python over kw (py)"""
        t = self.t
        if t[0] == 'c':
            return str(t[1])
        if t[0] == 'n':
            return '(int64_t)' + t[1] if c else "kw['%s']" % t[1] if py else t[1]
        op, a, b = t[1], S(0, t[2]), S(0, t[3])
        p = 1 if op in '+-' else 2
        s = '%s %s %s' % (a.text(c, p, py), '//' if py and op == '/' else op, b.text(c, p + 1, py))
        # in C and Python an expression goes into other text (an index, a loop bound): whole
        return '(%s)' % s if p < prec or ((c or py) and prec == 0) else s


def lit(v):
    return S(int(v), ('c', int(v)))


def arith(op, a, b):
    if not isinstance(a, S):
        a = lit(a)
    if not isinstance(b, S):
        b = lit(b)
    v = {'+': a.v + b.v, '-': a.v - b.v, '*': a.v * b.v, '/': a.v // b.v if b.v else 0}[op]
    if a.t[0] == 'c' and b.t[0] == 'c':
        return lit(v)
    if op == '*' and a.t == ('c', 1):
        return b
    if op in '*/' and b.t == ('c', 1) or op in '+-' and b.t == ('c', 0):
        return a
    if op == '+' and a.t == ('c', 0):
        return b
    return S(v, ('op', op, a.t, b.t))


def prod(xs):
    p = lit(1)
    for x in xs:
        p = arith('*', p, x)
    return p


def is_int(v):
    return isinstance(v, S) or (isinstance(v, int) and not isinstance(v, bool))


def iv(v):
    return v.v if isinstance(v, S) else v


# ---- the graph -------------------------------------------------------------------------

class T:
    """a tensor of forward: a node of the graph"""
    count = 0

    def __init__(self, kind, shape, args=(), dtype='f32', **at):
        self.kind, self.shape, self.args, self.dtype, self.at = kind, list(shape), list(args), dtype, at
        T.count += 1
        self.id = T.count

    @property
    def nd(self):
        return len(self.shape)


class Dist:
    """what get_inputs() draws: a shape, a distribution, a dtype"""
    def __init__(self, shape, init, dtype='f32', torch='float32', note=None):
        self.shape, self.init, self.dtype, self.torch, self.note = list(shape), init, dtype, torch, note


class Module:
    def __init__(self, kind, args, kw):
        self.kind, self.args, self.kw = kind, args, kw
        self.path = None


def unsupported(what):
    raise Refuse(what)


def bshape(a, b):
    """numpy broadcasting of two shapes"""
    n = max(len(a), len(b))
    a = [lit(1)] * (n - len(a)) + list(a)
    b = [lit(1)] * (n - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        # a literal 1 broadcasts; a size that is 1 in this workload is still a size
        if is_one(y) or (x.v == y.v and not is_one(x)):
            out.append(x)
        elif is_one(x) or x.v == y.v:
            out.append(y)
        else:
            unsupported('shapes %s and %s do not broadcast' % ([d.v for d in a], [d.v for d in b]))
    return out


def is_one(d):
    return d.t == ('c', 1)


def const(v):
    return T('const', [], value=float(v))


def size(d):
    """a size as a value of the computation (1 / sqrt(head_dim), a mean's count)"""
    return const(d.v) if d.t[0] == 'c' else T('size', [], sz=d)


def ew(fn, *xs, **at):
    xs = [x if isinstance(x, T) else size(x) if isinstance(x, S) else const(x) for x in xs]
    shape = []
    for x in xs:
        shape = bshape(shape, x.shape)
    dtype = 'f32'
    return T('ew', shape, xs, dtype=dtype, fn=fn, **at)


def axis(d, nd):
    d = iv(d)
    if not isinstance(d, int) or not -nd <= d < max(nd, 1):
        unsupported('dim %r of a %d-d tensor' % (d, nd))
    return d % nd if nd else 0


def reduce(op, x, dims, keep=False):
    if dims is None:
        dims = list(range(x.nd))
    dims = sorted({axis(d, x.nd) for d in (dims if isinstance(dims, (list, tuple)) else [dims])})
    shape = [lit(1) if i in dims else s for i, s in enumerate(x.shape) if keep or i not in dims]
    return T('red', shape, [x], dtype='i64' if op.startswith('arg') else 'f32', op=op, dims=dims, keep=keep)


def reshape(x, shape):
    if prod(shape).v != prod(x.shape).v:
        unsupported('a reshape changes the number of elements')
    return T('reshape', shape, [x], dtype=x.dtype)


def unsqueeze(x, d):
    d = iv(d)
    d = d % (x.nd + 1)
    return reshape(x, x.shape[:d] + [lit(1)] + x.shape[d:])


def perm(x, p):
    return T('perm', [x.shape[i] for i in p], [x], dtype=x.dtype, perm=list(p))


def transpose(x, a, b):
    p = list(range(x.nd))
    a, b = axis(a, x.nd), axis(b, x.nd)
    p[a], p[b] = p[b], p[a]
    return perm(x, p)


def matmul(a, b):
    if a.nd < 1 or b.nd < 1:
        unsupported('matmul of a scalar')
    sa = a if a.nd > 1 else reshape(a, [lit(1)] + a.shape)
    sb = b if b.nd > 1 else reshape(b, b.shape + [lit(1)])
    if sa.shape[-1].v != sb.shape[-2].v:
        unsupported('matmul of shapes that do not fit')
    batch = bshape(sa.shape[:-2], sb.shape[:-2])
    out = T('mm', batch + [sa.shape[-2], sb.shape[-1]], [sa, sb])
    if a.nd == 1:
        out = reshape(out, out.shape[:-2] + out.shape[-1:])
    if b.nd == 1:
        out = reshape(out, out.shape[:-1])
    return out


def softmax(x, d, log=False):
    d = axis(d, x.nd)
    m = reduce('max', x, [d], True)
    z = ew('sub', x, m)
    s = reduce('sum', ew('exp', z), [d], True)
    return ew('sub', z, ew('log', s)) if log else ew('div', ew('exp', z), s)


def moments(x, dims):
    mean = reduce('mean', x, dims, True)
    c = ew('sub', x, mean)
    return c, reduce('mean', ew('mul', c, c), dims, True)


def normalize(x, dims, eps):
    c, var = moments(x, dims)
    return ew('div', c, ew('sqrt', ew('add', var, eps)))


def scan(op, x, d, reverse=False):
    return T('scan', x.shape, [x], op=op, dim=axis(d, x.nd), reverse=reverse)


# ---- modules ---------------------------------------------------------------------------

def mod_arg(m, i, name, default=None):
    if len(m.args) > i:
        return m.args[i]
    return m.kw.get(name, default)


def tup(v, n):
    v = list(v) if isinstance(v, (tuple, list)) else [v] * n
    if len(v) != n or not all(is_int(x) for x in v):
        unsupported('a size of %d integers expected, got %r' % (n, v))
    return [x if isinstance(x, S) else lit(x) for x in v]


WEIGHTS = []  # the modules' parameters, inputs of the task
SIZES = []    # module-level sizes in the file's order
FIXED = set() # sizes a check must not change (channels of a grouped convolution)


def weight(m, what, shape, bound):
    name = (m.path + '_' + what).replace('.', '_')
    w = T('in', shape, name=name)
    WEIGHTS.append({'path': m.path + '.' + what, 'name': name, 'shape': shape,
                    'init': 'uniform(%.9g, %.9g)' % (-bound, bound)})
    return w


def conv_module(m, x, nd, transposed):
    if x.nd != nd + 2:
        unsupported('%s of a %d-d tensor' % (m.kind, x.nd))
    cin, cout = mod_arg(m, 0, 'in_channels'), mod_arg(m, 1, 'out_channels')
    k = tup(mod_arg(m, 2, 'kernel_size'), nd)
    st = tup(mod_arg(m, 3, 'stride', 1), nd)
    pad = mod_arg(m, 4, 'padding', 0)
    if isinstance(pad, str):
        unsupported("padding='%s'" % pad)
    pad = tup(pad, nd)
    if transposed:
        opad = tup(mod_arg(m, 5, 'output_padding', 0), nd)
        groups = mod_arg(m, 6, 'groups', 1)
        bias = mod_arg(m, 7, 'bias', True)
        dil = tup(mod_arg(m, 8, 'dilation', 1), nd)
    else:
        dil = tup(mod_arg(m, 5, 'dilation', 1), nd)
        groups = mod_arg(m, 6, 'groups', 1)
        bias = mod_arg(m, 7, 'bias', True)
        opad = [lit(0)] * nd
    if mod_arg(m, 8 if not transposed else 9, 'padding_mode', 'zeros') != 'zeros':
        unsupported('a padding_mode other than zeros')
    cin, cout, groups = [v if isinstance(v, S) else lit(v) for v in (cin, cout, groups)]
    if cin.v != x.shape[1].v:
        unsupported('%s expects %d channels, the input has %d' % (m.kind, cin.v, x.shape[1].v))
    if transposed:
        wshape = [cin, arith('/', cout, groups)] + k
        fan_in = arith('/', cout, groups).v * prod(k).v
    else:
        wshape = [cout, arith('/', cin, groups)] + k
        fan_in = arith('/', cin, groups).v * prod(k).v
    if groups.v != 1:  # channels stay divisible by groups: the odd-size check keeps them
        FIXED.update(cin.names() | cout.names() | groups.names())
    bound = 1.0 / math.sqrt(max(fan_in, 1))
    w = weight(m, 'weight', wshape, bound)
    args = [x, w]
    if bias:
        args.append(weight(m, 'bias', [cout], bound))
    spatial = []
    for i in range(nd):
        n = x.shape[2 + i]
        ext = arith('*', dil[i], arith('-', k[i], 1))
        if transposed:
            o = arith('+', arith('+', arith('-', arith('*', arith('-', n, 1), st[i]), arith('*', 2, pad[i])), ext), arith('+', opad[i], 1))
        else:
            o = arith('+', arith('/', arith('-', arith('-', arith('+', n, arith('*', 2, pad[i])), ext), 1), st[i]), 1)
        if o.v < 1:
            done("at these sizes the %s's output is empty (its input's axis %d is %d, its window "
                 "%d): give a larger --scale, or --set the size" % (m.kind, i, n.v, 1 + ext.v), True)
        spatial.append(o)
    return T('conv', [x.shape[0], cout] + spatial, args, nd=nd, k=k, stride=st, pad=pad, dil=dil,
             groups=groups, transposed=transposed, bias=bool(bias))


def pool_module(m, x, nd, op):
    if x.nd not in (nd + 1, nd + 2):
        unsupported('%s of a %d-d tensor' % (m.kind, x.nd))
    k = tup(mod_arg(m, 0, 'kernel_size'), nd)
    st = mod_arg(m, 1, 'stride', None)
    st = k if st is None else tup(st, nd)
    pad = tup(mod_arg(m, 2, 'padding', 0), nd)
    if op == 'max':
        dil = tup(mod_arg(m, 3, 'dilation', 1), nd)
        if mod_arg(m, 4, 'return_indices', False) or mod_arg(m, 5, 'ceil_mode', False):
            unsupported('return_indices or ceil_mode')
    else:
        dil = [lit(1)] * nd
        if mod_arg(m, 3, 'ceil_mode', False) or not mod_arg(m, 4, 'count_include_pad', True) \
                or mod_arg(m, 5, 'divisor_override', None) is not None:
            unsupported('ceil_mode, count_include_pad=False or divisor_override')
    lead = x.nd - nd
    spatial = []
    for i in range(nd):
        n = x.shape[lead + i]
        ext = arith('*', dil[i], arith('-', k[i], 1))
        o = arith('+', arith('/', arith('-', arith('-', arith('+', n, arith('*', 2, pad[i])), ext), 1), st[i]), 1)
        if o.v < 1:
            done("at these sizes the %s's output is empty (its input's axis %d is %d, its window "
                 "%d): give a larger --scale, or --set the size" % (m.kind, i, n.v, 1 + ext.v), True)
        spatial.append(o)
    return T('pool', x.shape[:lead] + spatial, [x], nd=nd, op=op, k=k, stride=st, pad=pad, dil=dil)


def norm_module(m, x):
    kind = m.kind
    eps = float(m.kw.get('eps', 1e-5))
    if kind in ('BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d'):
        # a fresh module is in training mode: the batch's own statistics
        if not m.kw.get('track_running_stats', True) and False:
            pass
        return normalize(x, [0] + list(range(2, x.nd)), eps)
    if kind in ('InstanceNorm1d', 'InstanceNorm2d', 'InstanceNorm3d'):
        return normalize(x, list(range(2, x.nd)), eps)
    if kind == 'GroupNorm':
        g = mod_arg(m, 0, 'num_groups')
        g = g if isinstance(g, S) else lit(g)
        c = x.shape[1]
        FIXED.update(g.names() | c.names())
        r = reshape(x, [x.shape[0], g, prod([arith('/', c, g)] + x.shape[2:])])
        return reshape(normalize(r, [2], eps), x.shape)
    if kind == 'LayerNorm':
        ns = mod_arg(m, 0, 'normalized_shape')
        n = len(ns) if isinstance(ns, (tuple, list)) else 1
        return normalize(x, list(range(x.nd - n, x.nd)), eps)
    unsupported('the module nn.%s' % kind)


def call_module(m, args, kw):
    k = m.kind
    x = args[0] if args else None
    for nd in (1, 2, 3):
        if k == 'Conv%dd' % nd:
            return conv_module(m, x, nd, False)
        if k == 'ConvTranspose%dd' % nd:
            return conv_module(m, x, nd, True)
        if k == 'MaxPool%dd' % nd:
            return pool_module(m, x, nd, 'max')
        if k == 'AvgPool%dd' % nd:
            return pool_module(m, x, nd, 'avg')
    if k == 'TripletMarginLoss':
        margin = float(m.kw.get('margin', mod_arg(m, 0, 'margin', 1.0)))
        p = float(m.kw.get('p', 2.0))
        if p != 2.0:
            unsupported('TripletMarginLoss with p != 2')
        return triplet(args[0], args[1], args[2], margin)
    if k in ('ReLU', 'Sigmoid', 'Tanh', 'GELU', 'SELU', 'Softplus', 'Softsign', 'Hardsigmoid'):
        return ew(k.lower())
    return norm_module(m, x)


def triplet(a, p, n, margin, eps=1e-6):
    dp = reduce('sum', ew('sq', ew('add', ew('sub', a, p), eps)), [-1])
    dn = reduce('sum', ew('sq', ew('add', ew('sub', a, n), eps)), [-1])
    z = ew('add', ew('sub', ew('sqrt', dp), ew('sqrt', dn)), margin)
    return reduce('mean', ew('relu', z), None)


# ---- the interpreter ---------------------------------------------------------------------

BIN = {ast.Add: '+', ast.Sub: '-', ast.Mult: '*', ast.FloorDiv: '/'}
EW_BIN = {ast.Add: 'add', ast.Sub: 'sub', ast.Mult: 'mul', ast.Div: 'div', ast.Pow: 'pow'}
UNARY = {'relu': 'relu', 'sigmoid': 'sigmoid', 'tanh': 'tanh', 'exp': 'exp', 'log': 'log',
         'sqrt': 'sqrt', 'rsqrt': 'rsqrt', 'abs': 'abs', 'gelu': 'gelu', 'selu': 'selu',
         'softplus': 'softplus', 'softsign': 'softsign', 'hardsigmoid': 'hardsigmoid',
         'neg': 'neg', 'sin': 'sin', 'cos': 'cos', 'erf': 'erf', 'silu': 'silu',
         'square': 'sq', 'log1p': 'log1p', 'exp2': 'exp2', 'reciprocal': 'recip', 'sign': 'sign'}
TORCH_DT = {'float32': ('f32', 'float32'), 'float': ('f32', 'float32'),
            'float16': ('f16', 'float16'), 'half': ('f16', 'float16'),
            'bfloat16': ('bf16', 'bfloat16'), 'float64': ('f64', 'float64'),
            'double': ('f64', 'float64'), 'int64': ('i64', 'int64'), 'long': ('i64', 'int64'),
            'int32': ('i32', 'int32'), 'int': ('i32', 'int32'), 'bool': ('i32', 'bool')}


def dotted(n):
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Attribute):
        d = dotted(n.value)
        return d + '.' + n.attr if d else None
    return None


def short(name):
    """torch.nn.functional.relu, F.relu, torch.relu -> relu; None for other prefixes"""
    for p in ('torch.nn.functional.', 'nn.functional.', 'F.', 'torch.nn.', 'nn.', 'torch.', 'math.'):
        if name.startswith(p):
            return name[len(p):]
    return None


class Interp:
    def __init__(self, env):
        self.env = env

    def kwargs(self, call):
        kw = {}
        for k in call.keywords:
            if k.arg is None:
                unsupported('**kwargs')
            kw[k.arg] = self.ev(k.value)
        return kw

    def args(self, call):
        out = []
        for a in call.args:
            if isinstance(a, ast.Starred):
                v = self.ev(a.value)
                if not isinstance(v, (tuple, list)):
                    unsupported('*%s is not a tuple' % ast.unparse(a.value))
                out += list(v)
            else:
                out.append(self.ev(a))
        return out

    def ev(self, n):
        m = getattr(self, 'ev_' + type(n).__name__, None)
        if m is None:
            unsupported('%s (%s)' % (type(n).__name__, ast.unparse(n)[:60]))
        return m(n)

    def ev_Constant(self, n):
        return lit(n.value) if is_int(n.value) else n.value

    def ev_Name(self, n):
        if n.id in self.env:
            return self.env[n.id]
        if n.id in ('True', 'False', 'None'):
            return {'True': True, 'False': False, 'None': None}[n.id]
        unsupported("the name '%s'" % n.id)

    def ev_Tuple(self, n):
        out = []
        for e in n.elts:
            if isinstance(e, ast.Starred):
                out += list(self.ev(e.value))
            else:
                out.append(self.ev(e))
        return tuple(out)

    def ev_List(self, n):
        return list(self.ev_Tuple(n))

    def ev_UnaryOp(self, n):
        v = self.ev(n.operand)
        if isinstance(n.op, ast.USub):
            return ew('neg', v) if isinstance(v, (T, Dist)) else (arith('-', 0, v) if isinstance(v, S) else -v)
        if isinstance(n.op, ast.UAdd):
            return v
        if isinstance(n.op, ast.Not):
            return not v
        unsupported(ast.unparse(n))

    def ev_BinOp(self, n):
        a, b = self.ev(n.left), self.ev(n.right)
        return self.binop(type(n.op), a, b, n)

    def binop(self, op, a, b, n):
        if isinstance(a, Dist) or isinstance(b, Dist):
            d = a if isinstance(a, Dist) else b
            return Dist(d.shape, d.init, d.dtype, d.torch, 'draws %s' % ast.unparse(n))
        if isinstance(a, T) or isinstance(b, T):
            if op not in EW_BIN:
                unsupported(ast.unparse(n))
            if op is ast.Pow and not isinstance(b, T) and float(iv(b)) == 2.0:
                return ew('sq', a)
            return ew(EW_BIN[op], a, b)
        if is_int(a) and is_int(b) and op in BIN:
            return arith(BIN[op], a, b)
        a, b = iv(a), iv(b)
        try:
            return {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                    ast.Div: lambda: a / b, ast.Pow: lambda: a ** b, ast.Mod: lambda: a % b,
                    ast.FloorDiv: lambda: a // b}[op]()
        except Exception:
            unsupported(ast.unparse(n))

    def ev_Subscript(self, n):
        v = self.ev(n.value)
        i = self.ev(n.slice)
        if isinstance(v, (tuple, list)) and is_int(i):
            return v[iv(i)]
        if isinstance(v, T) and v.kind == 'maxmin' and is_int(i):
            return v.at['pair'][iv(i)]
        unsupported('indexing %s' % ast.unparse(n)[:60])

    def ev_Attribute(self, n):
        v = self.ev(n.value)
        if isinstance(v, T):
            if n.attr == 'T':
                return perm(v, list(range(v.nd))[::-1])
            if n.attr == 'shape':
                return tuple(v.shape)
            if n.attr == 'mT':
                return transpose(v, -2, -1)
        if isinstance(v, Dist):
            if n.attr == 'shape':
                return tuple(v.shape)
            if n.attr == 'T':
                return v
        if isinstance(v, dict) and n.attr in v:
            return v[n.attr]
        if dotted(n) == 'math.pi':
            return math.pi
        if dotted(n) == 'math.e':
            return math.e
        return Callee(dotted(n), v)

    def ev_Call(self, n):
        f = n.func
        args, kw = self.args(n), self.kwargs(n)
        if isinstance(f, ast.Attribute):
            obj = self.ev(f.value) if not dotted(f.value) or dotted(f.value).split('.')[0] in self.env else None
            if isinstance(obj, (T, Dist)):
                return self.method(obj, f.attr, args, kw, n)
            if isinstance(obj, Module):
                return call_module(obj, args, kw)
            if isinstance(obj, dict) and isinstance(obj.get(f.attr), Module):
                return call_module(obj[f.attr], args, kw)
        if isinstance(f, ast.Name) and f.id in self.env and isinstance(self.env[f.id], Module):
            return call_module(self.env[f.id], args, kw)
        name = dotted(f) or ''
        return self.function(name, args, kw, n)

    def method(self, x, name, args, kw, n):
        if isinstance(x, Dist):
            if name in ('float', 'bool', 'long', 'int', 'double', 'half'):
                dt = TORCH_DT[name]
                note = x.note
                if name == 'bool' and x.init == 'randint(0, 2)':
                    return Dist(x.shape, x.init, 'i32', 'bool', note)
                if name == 'float':
                    return Dist(x.shape, x.init if x.dtype.startswith('f') else
                                'uniform(%s)' % x.init[8:-1], 'f32', 'float32', note)
                return Dist(x.shape, x.init, dt[0], dt[1], note)
            return Dist(x.shape, x.init, x.dtype, x.torch, 'draws %s' % ast.unparse(n))
        return self.function('torch.' + name, [x] + args, kw, n)

    def function(self, name, args, kw, n):
        s = short(name) if name not in ('max', 'min', 'int', 'float', 'len', 'tuple') else name
        if s is None:
            unsupported("the call '%s'" % ast.unparse(n.func))
        if s in ('rand', 'randn', 'randint', 'rand_like', 'randn_like', 'zeros', 'ones',
                 'empty', 'tensor', 'triu', 'tril'):
            return self.dist(s, args, kw, n)
        if s == 'sqrt' and not any(isinstance(a, T) for a in args):
            return math.sqrt(float(iv(args[0])))
        if s in ('int', 'float', 'tuple', 'len'):
            return {'int': int, 'float': float, 'tuple': tuple, 'len': len}[s](iv(args[0]) if s != 'tuple' else args[0])
        if s in ('max', 'min') and not any(isinstance(a, T) for a in args):
            return {'max': max, 'min': min}[s](*[iv(a) for a in args])
        op = OPS.get(s)
        if op is None:
            m = Module(s, args, kw) if s[:1].isupper() else None
            if m is not None:
                return m
            unsupported("'%s'" % name)
        return op(*args, **kw)

    def dist(self, s, args, kw, n):
        if s in ('triu', 'tril') and isinstance(args[0], T):
            x = args[0]
            if args[1:] or kw:
                unsupported('%s with a diagonal' % s)
            return T('tri', x.shape, [x], dtype=x.dtype, upper=s == 'triu')
        if s in ('triu', 'tril'):
            d = args[0]
            return Dist(d.shape, d.init, d.dtype, d.torch, 'draws %s' % ast.unparse(n))
        dt = TORCH_DT.get(str(kw.get('dtype', 'float32')).split('.')[-1], None)
        if s == 'randint':
            lo, hi, shape = (0, args[0], args[1]) if len(args) == 2 else args[:3]
            shape = shape if isinstance(shape, (tuple, list)) else [shape]
            return Dist(shape, 'randint(%d, %d)' % (iv(lo), iv(hi)), 'i64', 'int64')
        shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        if s in ('rand_like', 'randn_like'):
            shape = args[0].shape
        if not all(is_int(d) for d in shape):
            unsupported('a size of %s' % ast.unparse(n))
        init = {'rand': 'uniform(0, 1)', 'randn': 'normal(0, 1)', 'rand_like': 'uniform(0, 1)',
                'randn_like': 'normal(0, 1)', 'zeros': '0', 'ones': '1', 'empty': '0'}.get(s)
        if init is None or dt is None:
            unsupported(ast.unparse(n)[:60])
        return Dist([d if isinstance(d, S) else lit(d) for d in shape], init, dt[0], dt[1])


class Callee:
    def __init__(self, name, obj):
        self.name, self.obj = name, obj


def red_args(x, dim=None, keepdim=False, **kw):
    return dim, keepdim


def f_sum(x, dim=None, keepdim=False, **kw):
    return reduce('sum', x, dim, keepdim)


def f_mean(x, dim=None, keepdim=False, **kw):
    return reduce('mean', x, dim, keepdim)


def f_prod(x, dim=None, keepdim=False, **kw):
    return reduce('prod', x, dim, keepdim)


def f_maxmin(op):
    def f(x, dim=None, keepdim=False, **kw):
        if isinstance(dim, T) or (not isinstance(x, T)):
            return ew('max' if op == 'max' else 'min', x, dim)
        if dim is None:
            return reduce(op, x, None)
        v = reduce(op, x, dim, keepdim)
        i = reduce('arg' + op, x, dim, keepdim)
        return T('maxmin', v.shape, [v], pair=(v, i))
    return f


def f_norm(x, p='fro', dim=None, keepdim=False, **kw):
    if p not in ('fro', 2, 2.0) and not (isinstance(p, S) and p.v == 2):
        unsupported('a norm with p=%r' % p)
    return ew('sqrt', reduce('sum', ew('sq', x), dim, keepdim))


def f_clamp(x, min=None, max=None, **kw):
    if min is None and max is None:
        unsupported('clamp without bounds')
    return ew('clamp', x, lo=None if min is None else float(iv(min)), hi=None if max is None else float(iv(max)))


def f_cumsum(x, dim, **kw):
    return scan('sum', x, dim)


def f_cumprod(x, dim, **kw):
    return scan('prod', x, dim)


def f_flip(x, dims, *more, **kw):
    ds = dims if isinstance(dims, (tuple, list)) else [dims] + list(more)
    if len(ds) != 1:
        unsupported('flip over several dims')
    return T('flip', x.shape, [x], dtype=x.dtype, dim=axis(ds[0], x.nd))


def f_softmax(x, dim=None, **kw):
    return softmax(x, dim if dim is not None else -1)


def f_log_softmax(x, dim=None, **kw):
    return softmax(x, dim if dim is not None else -1, True)


def f_einsum(eq, *ops, **kw):
    ops = list(ops[0]) if len(ops) == 1 and isinstance(ops[0], (list, tuple)) else list(ops)
    ins, out = eq.replace(' ', '').split('->')
    ins = ins.split(',')
    if len(ins) != 2 or len(ops) != 2:
        unsupported('einsum of other than two operands')
    (a, b), (x, y) = ins, ops
    if len(a) != x.nd or len(b) != y.nd:
        unsupported('einsum subscripts do not fit the operands')
    size = {}
    for sub, t in ((a, x), (b, y)):
        for c, d in zip(sub, t.shape):
            size.setdefault(c, d)
    return T('einsum', [size[c] for c in out], [x, y], subs=(a, b, out), size={c: size[c] for c in size})


def f_sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
    if attn_mask is not None or dropout_p or is_causal:
        unsupported('attention with a mask, dropout or is_causal')
    sc = const(float(scale)) if scale is not None else ew('rsqrt', size(q.shape[-1]))
    s = ew('mul', matmul(q, transpose(k, -2, -1)), sc)
    return matmul(softmax(s, -1), v)


def f_cross_entropy(x, t, **kw):
    if kw.get('weight') is not None or kw.get('reduction', 'mean') != 'mean' or kw.get('label_smoothing', 0):
        unsupported('cross_entropy with weight, label smoothing or another reduction')
    if x.nd != 2 or t.nd != 1:
        unsupported('cross_entropy of other than (batch, classes) logits')
    m = reduce('max', x, [1], True)
    lse = ew('add', ew('log', reduce('sum', ew('exp', ew('sub', x, m)), [1], True)), m)
    g = T('gather', [x.shape[0], lit(1)], [x, t])
    return reduce('mean', ew('sub', lse, g), None)


def f_loss(kind):
    def f(p, t, reduction='mean', **kw):
        if reduction != 'mean' and not (kind == 'kl' and reduction == 'batchmean'):
            unsupported('%s with reduction %r' % (kind, reduction))
        if kind == 'mse':
            return reduce('mean', ew('sq', ew('sub', p, t)), None)
        if kind == 'smooth_l1':
            beta = float(kw.get('beta', 1.0))
            return reduce('mean', ew('huber', ew('sub', p, t), beta=beta), None)
        if kind == 'l1':
            return reduce('mean', ew('abs', ew('sub', p, t)), None)
        # kl_div(input = log q, target p): sum(p * (log p - input)), batchmean / batch
        if kw.get('log_target'):
            unsupported('kl_div with log_target')
        s = reduce('sum', ew('xlogy_sub', t, p), None)
        return ew('div', s, size(p.shape[0]) if reduction == 'batchmean' else size(prod(p.shape)))
    return f


def f_unary(name):
    def f(x, *a, **kw):
        at, fn = {}, name
        if fn == 'leaky_relu':
            at['a'] = float(iv(a[0] if a else kw.get('negative_slope', 0.01)))
        elif fn == 'elu':
            at['a'] = float(iv(a[0] if a else kw.get('alpha', 1.0)))
        elif fn == 'hardtanh':
            return ew('clamp', x, lo=float(iv(a[0] if a else kw.get('min_val', -1.0))),
                      hi=float(iv(a[1] if len(a) > 1 else kw.get('max_val', 1.0))))
        elif fn == 'gelu' and kw.get('approximate', 'none') != 'none':
            fn = 'gelu_tanh'
        elif fn == 'softplus' and (kw.get('beta', 1) != 1 or kw.get('threshold', 20) != 20):
            unsupported('softplus with beta or threshold')
        elif a or kw:
            unsupported('%s with arguments' % fn)
        return ew(fn, x, **at)
    return f


def f_pow(x, e, **kw):
    if not isinstance(e, T) and float(iv(e)) == 2.0:
        return ew('sq', x)
    return ew('pow', x, e if isinstance(e, T) else float(iv(e)))


def f_binary(fn):
    return lambda a, b, **kw: ew(fn, a, b)


OPS = {
    'matmul': matmul, 'mm': matmul, 'bmm': matmul,
    'sum': f_sum, 'mean': f_mean, 'prod': f_prod, 'max': f_maxmin('max'), 'min': f_maxmin('min'),
    'amax': lambda x, dim=None, keepdim=False: reduce('max', x, dim, keepdim),
    'amin': lambda x, dim=None, keepdim=False: reduce('min', x, dim, keepdim),
    'argmax': lambda x, dim=None, keepdim=False: reduce('argmax', x, dim, keepdim),
    'argmin': lambda x, dim=None, keepdim=False: reduce('argmin', x, dim, keepdim),
    'norm': f_norm, 'clamp': f_clamp, 'clip': f_clamp, 'cumsum': f_cumsum, 'cumprod': f_cumprod,
    'flip': f_flip, 'softmax': f_softmax, 'log_softmax': f_log_softmax, 'einsum': f_einsum,
    'scaled_dot_product_attention': f_sdpa, 'cross_entropy': f_cross_entropy,
    'mse_loss': f_loss('mse'), 'smooth_l1_loss': f_loss('smooth_l1'), 'l1_loss': f_loss('l1'),
    'kl_div': f_loss('kl'), 'pow': f_pow, 'add': f_binary('add'), 'sub': f_binary('sub'),
    'mul': f_binary('mul'), 'div': f_binary('div'), 'maximum': f_binary('max'),
    'minimum': f_binary('min'), 'unsqueeze': unsqueeze,
    'transpose': transpose, 't': lambda x: transpose(x, 0, 1),
    'permute': lambda x, *p: perm(x, [axis(d, x.nd) for d in (p[0] if len(p) == 1 and isinstance(p[0], (tuple, list)) else p)]),
    'reshape': lambda x, *s: reshape(x, resolve_shape(x, s)), 'view': lambda x, *s: reshape(x, resolve_shape(x, s)),
    'contiguous': lambda x: x, 'squeeze': lambda x, d=None: reshape(x, [s for i, s in enumerate(x.shape) if s.v != 1 or (d is not None and i != axis(d, x.nd))]),
    'leaky_relu': f_unary('leaky_relu'), 'elu': f_unary('elu'), 'hardtanh': f_unary('hardtanh'),
    'triplet_margin_loss': lambda a, p, n, margin=1.0, **kw: triplet(a, p, n, float(margin)),
}
for _k, _v in UNARY.items():
    OPS.setdefault(_k, f_unary(_v))
OPS['gelu'] = f_unary('gelu')
OPS['softplus'] = f_unary('softplus')


def resolve_shape(x, s):
    s = list(s[0]) if len(s) == 1 and isinstance(s[0], (tuple, list)) else list(s)
    total = prod(x.shape)
    known = prod([d for d in s if iv(d) != -1])
    return [arith('/', total, known) if iv(d) == -1 else (d if isinstance(d, S) else lit(d)) for d in s]


# ---- reading the file ----------------------------------------------------------------------

def module_env(tree, scaled):
    env, sizes = {'math': None}, []
    for node in tree.body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        tg = node.targets[0]
        try:
            v = Interp(env).ev(node.value)
        except Refuse:
            continue
        if isinstance(tg, ast.Tuple) and isinstance(v, tuple) and len(tg.elts) == len(v):
            pairs = [(e.id, x) for e, x in zip(tg.elts, v) if isinstance(e, ast.Name)]
        elif isinstance(tg, ast.Name):
            pairs = [(tg.id, v)]
        else:
            continue
        for name, x in pairs:
            env[name] = bind(name, x, scaled, sizes)
    return env, sizes


def bind(name, v, scaled, sizes):
    """a module-level integer becomes a named size (a param when a shape uses it)"""
    if isinstance(v, tuple):
        if len(v) == 1:
            return (bind(name, v[0], scaled, sizes),)
        return tuple(bind('%s_%d' % (name, i), x, scaled, sizes) for i, x in enumerate(v))
    if not is_int(v) or (isinstance(v, S) and v.t[0] == 'n'):
        return v
    val = iv(v)
    if name in SETS:
        try:
            val = int(SETS[name])
        except ValueError:
            raise Refuse("--set %s=%s: not an integer" % (name, SETS[name]))
    elif name in scaled:
        val = max(1, int(round(val * SCALE)))
    sizes.append((name, val))
    return S(val, ('n', name))


def find(tree, kind, name):
    for n in tree.body:
        if isinstance(n, kind) and n.name == name:
            return n
    return None


def run_function(fn, env):
    """get_inputs() / get_init_inputs(): assignments, then return a list"""
    local = dict(env)
    for st in fn.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            local[st.targets[0].id] = Interp(local).ev(st.value)
        elif isinstance(st, ast.Return):
            v = Interp(local).ev(st.value)
            if not isinstance(v, (list, tuple)):
                unsupported('%s() does not return a list' % fn.name)
            return list(v)
        else:
            unsupported('the statement "%s" in %s()' % (ast.unparse(st)[:60], fn.name))
    unsupported('%s() returns nothing' % fn.name)


def bind_args(fn, values, env, skip_self=True):
    a = fn.args
    params = [p.arg for p in a.args][1 if skip_self else 0:]
    defaults = [Interp(env).ev(d) for d in a.defaults]
    local = {}
    for i, p in enumerate(params):
        di = i - (len(params) - len(defaults))
        if i < len(values):
            local[p] = values[i]
        elif di >= 0:
            local[p] = defaults[di]
        else:
            unsupported("no value for %s's argument '%s'" % (fn.name, p))
    for k, d in zip(a.kwonlyargs, a.kw_defaults):
        local[k.arg] = Interp(env).ev(d) if d is not None else None
    return local


def model_attrs(model, init_values, env):
    """self.X of Model.__init__: modules and values"""
    init = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == '__init__'), None)
    attrs = {}
    if init is None:
        return attrs
    local = dict(env)
    local.update(bind_args(init, init_values, env))
    for st in init.body:
        if isinstance(st, ast.Expr) and (isinstance(st.value, ast.Constant) or 'super' in ast.unparse(st)):
            continue
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            tg = st.targets[0]
            v = Interp(local).ev(st.value)
            if isinstance(tg, ast.Attribute) and dotted(tg.value) == 'self':
                if isinstance(v, Module):
                    v.path = tg.attr
                attrs[tg.attr] = v
                continue
            if isinstance(tg, ast.Name):
                local[tg.id] = v
                continue
        unsupported('the statement "%s" in __init__' % ast.unparse(st)[:60])
    return attrs


def run_forward(fwd, args, attrs, env):
    local = dict(env)
    local['self'] = attrs
    local.update(bind_args(fwd, args, env))
    body = [s for s in fwd.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    for st in body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            local[st.targets[0].id] = Interp(local).ev(st.value)
        elif isinstance(st, ast.Return):
            return Interp(local).ev(st.value)
        else:
            unsupported('the statement "%s" in forward' % ast.unparse(st)[:60])
    unsupported('forward returns nothing')


# ---- code: naive C ---------------------------------------------------------------------------

C_EW = {
    'add': '({0} + {1})', 'sub': '({0} - {1})', 'mul': '({0} * {1})', 'div': '({0} / {1})',
    'pow': 'powf({0}, {1})', 'max': 'fmaxf({0}, {1})', 'min': 'fminf({0}, {1})',
    'neg': '(-{0})', 'abs': 'fabsf({0})', 'exp': 'expf({0})', 'log': 'logf({0})',
    'sqrt': 'sqrtf({0})', 'rsqrt': '(1.0f / sqrtf({0}))', 'sq': '({0} * {0})',
    'tanh': 'tanhf({0})', 'sigmoid': '(1.0f / (1.0f + expf(-{0})))',
    'relu': '({0} > 0.0f ? {0} : 0.0f)', 'silu': '({0} / (1.0f + expf(-{0})))',
    'gelu': '(0.5f * {0} * (1.0f + erff({0} * 0.70710678f)))',
    'gelu_tanh': '(0.5f * {0} * (1.0f + tanhf(0.7978845608f * ({0} + 0.044715f * {0} * {0} * {0}))))',
    'selu': '(1.0507009873554805f * ({0} > 0.0f ? {0} : 1.6732632423543772f * expm1f({0})))',
    'softplus': '({0} > 20.0f ? {0} : log1pf(expf({0})))', 'softsign': '({0} / (1.0f + fabsf({0})))',
    'hardsigmoid': 'fminf(fmaxf({0} / 6.0f + 0.5f, 0.0f), 1.0f)', 'sin': 'sinf({0})',
    'cos': 'cosf({0})', 'erf': 'erff({0})', 'log1p': 'log1pf({0})', 'exp2': 'exp2f({0})',
    'recip': '(1.0f / {0})', 'sign': '(float)(({0} > 0.0f) - ({0} < 0.0f))',
    'leaky_relu': '({0} > 0.0f ? {0} : {a}f * {0})', 'elu': '({0} > 0.0f ? {0} : {a}f * expm1f({0}))',
    'huber': '(fabsf({0}) < {beta}f ? 0.5f * {0} * {0} / {beta}f : fabsf({0}) - 0.5f * {beta}f)',
    'xlogy_sub': '({0} > 0.0f ? {0} * (logf({0}) - {1}) : 0.0f)',
}
NP_EW = {
    'add': '({0} + {1})', 'sub': '({0} - {1})', 'mul': '({0} * {1})', 'div': '({0} / {1})',
    'pow': 'np.power({0}, {1})', 'max': 'np.maximum({0}, {1})', 'min': 'np.minimum({0}, {1})',
    'neg': '(-{0})', 'abs': 'np.abs({0})', 'exp': 'np.exp({0})', 'log': 'np.log({0})',
    'sqrt': 'np.sqrt({0})', 'rsqrt': '(1.0 / np.sqrt({0}))', 'sq': '({0} * {0})',
    'tanh': 'np.tanh({0})', 'sigmoid': '(1.0 / (1.0 + np.exp(-{0})))',
    'relu': 'np.maximum({0}, 0.0)', 'silu': '({0} / (1.0 + np.exp(-{0})))',
    'gelu': '(0.5 * {0} * (1.0 + _ks_erf({0} * 0.7071067811865476)))',
    'gelu_tanh': '(0.5 * {0} * (1.0 + np.tanh(0.7978845608028654 * ({0} + 0.044715 * {0} ** 3))))',
    'selu': '(1.0507009873554805 * np.where({0} > 0, {0}, 1.6732632423543772 * np.expm1({0})))',
    'softplus': 'np.where({0} > 20, {0}, np.log1p(np.exp(np.minimum({0}, 20))))',
    'softsign': '({0} / (1.0 + np.abs({0})))', 'hardsigmoid': 'np.clip({0} / 6.0 + 0.5, 0.0, 1.0)',
    'sin': 'np.sin({0})', 'cos': 'np.cos({0})', 'erf': '_ks_erf({0})', 'log1p': 'np.log1p({0})',
    'exp2': 'np.exp2({0})', 'recip': '(1.0 / {0})', 'sign': 'np.sign({0})',
    'leaky_relu': 'np.where({0} > 0, {0}, {a} * {0})', 'elu': 'np.where({0} > 0, {0}, {a} * np.expm1({0}))',
    'huber': 'np.where(np.abs({0}) < {beta}, 0.5 * {0} ** 2 / {beta}, np.abs({0}) - 0.5 * {beta})',
    'xlogy_sub': 'np.where({0} > 0, {0} * (np.log(np.where({0} > 0, {0}, 1.0)) - {1}), 0.0)',
}


def cfloat(v):
    s = repr(float(v))
    if 'inf' in s or 'nan' in s:
        unsupported('a constant %s' % s)
    return s if ('.' in s or 'e' in s) else s + '.0'


class CGen:
    """naive C: one loop nest per node, every node in a buffer of its own (reductions
    accumulate in double), loops marked KS_PAR where iterations are independent"""
    def __init__(self, out):
        self.lines, self.bufs, self.freed, self.n = [], {}, [], 0
        self.out, self.outname = out, 'y'

    def dims(self, t):
        return [d.text(c=True) for d in t.shape]

    def numel(self, t):
        return prod(t.shape).text(c=True) if t.shape else '1'

    def emit(self, s):
        self.lines.append('\t' + s)

    def buf(self, t):
        if t.id in self.bufs:
            return self.bufs[t.id]
        if t.kind == 'in':
            self.bufs[t.id] = t.at['name']
            return t.at['name']
        if t.kind == 'reshape' and t is not self.out:  # the output is a copy
            name = self.buf(t.args[0])
            self.bufs[t.id] = name
            return name
        if t.kind == 'maxmin':
            return self.buf(t.args[0])
        self.n += 1
        name = 't%d' % self.n
        ctype = 'int64_t' if t.dtype == 'i64' else 'float'
        if t is self.out:
            name = self.outname
        else:
            self.emit('%s *%s = malloc(sizeof(%s) * (size_t)(%s));' % (ctype, name, ctype, self.numel(t)))
            self.emit('if (!%s)\n\t\tgoto out;' % name)
            self.freed.append(name)
        self.bufs[t.id] = name
        self.node(t, name)
        return name

    def unravel(self, shape, idx, pre):
        """indices pre0..preN-1 of flat index idx in shape"""
        if not shape:
            return []
        r = 'r_' + pre
        self.emit('\tint64_t %s = %s;' % (r, idx))
        for k in range(len(shape) - 1, -1, -1):
            d = shape[k].text(c=True)
            self.emit('\tint64_t %s%d = %s %% (%s); %s /= (%s); (void)%s%d;' % (pre, k, r, d, r, d, pre, k))
        self.emit('\t(void)%s;' % r)
        return ['%s%d' % (pre, k) for k in range(len(shape))]

    def offset(self, t, idx, out_shape):
        """the offset in t (broadcast to out_shape, right-aligned) of index names idx"""
        lead = len(out_shape) - t.nd
        terms, stride = [], lit(1)
        for k in range(t.nd - 1, -1, -1):
            if not is_one(t.shape[k]):
                terms.append('%s * (%s)' % (idx[lead + k], stride.text(c=True)) if stride.t != ('c', 1) else idx[lead + k])
            stride = arith('*', stride, t.shape[k])
        return ' + '.join(reversed(terms)) or '0'

    def ew_expr(self, t, idx, out_shape, decl):
        if t.kind == 'const':
            return cfloat(t.at['value']) + 'f'
        if t.kind == 'param':
            return '(float)' + t.at['name']
        if t.kind == 'size':
            return '(float)(%s)' % t.at['sz'].text(c=True)
        if t.kind == 'ew':
            args = [self.ew_expr(a, idx, out_shape, decl) for a in t.args]
            at = {k: cfloat(v) for k, v in t.at.items() if k in ('a', 'beta')}
            if t.at['fn'] == 'clamp':
                e = args[0]
                if t.at['lo'] is not None:
                    e = 'fmaxf(%s, %sf)' % (e, cfloat(t.at['lo']))
                if t.at['hi'] is not None:
                    e = 'fminf(%s, %sf)' % (e, cfloat(t.at['hi']))
                return e
            tmpl = C_EW[t.at['fn']]
            if '{0}' in tmpl and tmpl.count('{0}') > 1 and not args[0].isidentifier():
                v = 'v%d' % len(decl)
                decl.append('float %s = %s;' % (v, args[0]))
                args[0] = v
            return tmpl.format(*args, **at)
        b = self.buf(t)
        return '(float)%s[%s]' % (b, self.offset(t, idx, out_shape))

    def node(self, t, y):
        getattr(self, 'n_' + t.kind)(t, y)

    def n_ew(self, t, y):
        # buffers of the leaves first (their loops come before this one)
        self.leaves(t)
        decl = []
        self.emit('KS_PAR')
        self.emit('for (int64_t i = 0; i < %s; i++) {' % self.numel(t))
        body = []
        save, self.lines = self.lines, body
        idx = self.unravel(t.shape, 'i', 'i')
        expr = self.ew_expr(t, idx, t.shape, decl)
        self.lines = save
        self.lines += body
        for d in decl:
            self.emit('\t' + d)
        self.emit('\t%s[i] = %s;' % (y, expr))
        self.emit('}')

    def leaves(self, t):
        for a in t.args:
            if a.kind == 'ew':
                self.leaves(a)
            elif a.kind not in ('const', 'param', 'size'):
                self.buf(a)

    def n_const(self, t, y):
        self.emit('%s[0] = %sf;' % (y, cfloat(t.at['value'])))

    def n_red(self, t, y):
        x = t.args[0]
        xb = self.buf(x)
        dims, op = t.at['dims'], t.at['op']
        kept = [i for i in range(x.nd) if i not in dims]
        red = prod([x.shape[i] for i in dims]).text(c=True)
        self.emit('KS_PAR')
        self.emit('for (int64_t o = 0; o < %s; o++) {' % self.numel(t))
        ko = self.unravel([x.shape[i] for i in kept], 'o', 'k')
        init = {'sum': '0.0', 'mean': '0.0', 'prod': '1.0'}.get(op, 'NAN')
        self.emit('\tdouble acc = %s; int64_t best = 0; (void)best;' % init)
        self.emit('\tfor (int64_t r = 0; r < %s; r++) {' % red)
        self.lines.append('\t' + '')
        ro = self.unravel([x.shape[i] for i in dims], 'r', 'q')
        names = [None] * x.nd
        for j, i in enumerate(kept):
            names[i] = ko[j]
        for j, i in enumerate(dims):
            names[i] = ro[j]
        self.emit('\t\tdouble v = %s[%s];' % (xb, self.offset(x, names, x.shape)))
        upd = {'sum': 'acc += v;', 'mean': 'acc += v;', 'prod': 'acc *= v;',
               'max': 'if (r == 0 || v > acc || v != v) { acc = v; }',
               'min': 'if (r == 0 || v < acc || v != v) { acc = v; }',
               'argmax': 'if (r == 0 || v > acc) { acc = v; best = r; }',
               'argmin': 'if (r == 0 || v < acc) { acc = v; best = r; }'}[op]
        self.emit('\t\t' + upd)
        self.emit('\t}')
        fin = {'mean': '(float)(acc / (double)(%s))' % red, 'argmax': 'best', 'argmin': 'best'}.get(op, '(float)acc')
        self.emit('\t%s[o] = %s;' % (y, fin))
        self.emit('}')

    def n_scan(self, t, y):
        x = t.args[0]
        xb = self.buf(x)
        d = t.at['dim']
        n = x.shape[d].text(c=True)
        inner = prod(x.shape[d + 1:]).text(c=True)
        outer = prod(x.shape[:d]).text(c=True)
        self.emit('KS_PAR')
        self.emit('for (int64_t o = 0; o < %s * %s; o++) {' % (outer, inner))
        self.emit('\tint64_t base = (o / %s) * %s * %s + o %% %s;' % (inner, n, inner, inner))
        self.emit('\tdouble acc = %s;' % ('0.0' if t.at['op'] == 'sum' else '1.0'))
        self.emit('\tfor (int64_t j = 0; j < %s; j++) {' % n)
        j = '(%s - 1 - j)' % n if t.at['reverse'] else 'j'
        self.emit('\t\tint64_t at = base + %s * %s;' % (j, inner))
        self.emit('\t\tacc %s= %s[at];' % ('+' if t.at['op'] == 'sum' else '*', xb))
        self.emit('\t\t%s[at] = (float)acc;' % y)
        self.emit('\t}')
        self.emit('}')

    def remap(self, t, y, src_index):
        """y[i] = x[f(i)] over t's shape"""
        x = t.args[0]
        xb = self.buf(x)
        self.emit('KS_PAR')
        self.emit('for (int64_t i = 0; i < %s; i++) {' % self.numel(t))
        idx = self.unravel(t.shape, 'i', 'i')
        self.emit('\t%s[i] = %s[%s];' % (y, xb, self.offset(x, src_index(idx), x.shape)))
        self.emit('}')

    def n_tri(self, t, y):
        x = t.args[0]
        xb = self.buf(x)
        self.emit('KS_PAR')
        self.emit('for (int64_t i = 0; i < %s; i++) {' % self.numel(t))
        idx = self.unravel(t.shape, 'i', 'i')
        keep = '%s %s %s' % (idx[-1], '>=' if t.at['upper'] else '<=', idx[-2])
        self.emit('\t%s[i] = %s ? %s[i] : 0.0f;' % (y, keep, xb))
        self.emit('}')

    def n_perm(self, t, y):
        p = t.at['perm']
        inv = [0] * len(p)
        for k, src in enumerate(p):
            inv[src] = k
        self.remap(t, y, lambda idx: [idx[inv[k]] for k in range(len(p))])

    def n_flip(self, t, y):
        d = t.at['dim']
        self.remap(t, y, lambda idx: [('(%s - 1 - %s)' % (t.shape[k].text(c=True), idx[k])) if k == d else idx[k]
                                      for k in range(len(idx))])

    def n_reshape(self, t, y):
        # only reached for the output: a copy
        xb = self.buf(t.args[0])
        self.emit('for (int64_t i = 0; i < %s; i++)\n\t\t%s[i] = %s[i];' % (self.numel(t), y, xb))

    n_in = n_reshape

    def n_maxmin(self, t, y):
        unsupported('max/min with dim used without [0] or [1]')

    def n_gather(self, t, y):
        x, ix = t.args
        xb, ib = self.buf(x), self.buf(ix)
        c = x.shape[1].text(c=True)
        self.emit('KS_PAR')
        self.emit('for (int64_t i = 0; i < %s; i++)' % x.shape[0].text(c=True))
        self.emit('\t%s[i] = %s[i * %s + %s[i]];' % (y, xb, c, ib))

    def n_mm(self, t, y):
        a, b = t.args
        ab, bb = self.buf(a), self.buf(b)
        M, N, K = t.shape[-2].text(c=True), t.shape[-1].text(c=True), a.shape[-1].text(c=True)
        batch = t.shape[:-2]
        self.emit('KS_PAR')
        self.emit('for (int64_t o = 0; o < %s; o++) {' % self.numel(t))
        idx = self.unravel(t.shape, 'o', 'i')
        bi = idx[:-2]
        ia, ib = bi + [idx[-2], 'p'], bi + ['p', idx[-1]]
        self.emit('\tdouble acc = 0.0;')
        self.emit('\tfor (int64_t p = 0; p < %s; p++)' % K)
        self.emit('\t\tacc += (double)%s[%s] * %s[%s];' % (ab, self.offset(a, ia, batch + [a.shape[-2], a.shape[-1]]),
                                                        bb, self.offset(b, ib, batch + [b.shape[-2], b.shape[-1]])))
        self.emit('\t%s[o] = (float)acc;' % y)
        self.emit('}')
        del M, N

    def n_einsum(self, t, y):
        a, b = t.args
        ab, bb = self.buf(a), self.buf(b)
        sa, sb, so = t.at['subs']
        size = t.at['size']
        red = [c for c in size if c not in so]
        self.emit('KS_PAR')
        self.emit('for (int64_t o = 0; o < %s; o++) {' % self.numel(t))
        idx = dict(zip(so, self.unravel(t.shape, 'o', 'i')))
        self.emit('\tdouble acc = 0.0;')
        self.emit('\tfor (int64_t r = 0; r < %s; r++) {' % prod([size[c] for c in red]).text(c=True))
        for c, nm in zip(red, self.unravel([size[c] for c in red], 'r', 'q')):
            idx[c] = nm
        self.emit('\t\tacc += (double)%s[%s] * %s[%s];' % (ab, self.offset(a, [idx[c] for c in sa], a.shape),
                                                        bb, self.offset(b, [idx[c] for c in sb], b.shape)))
        self.emit('\t}')
        self.emit('\t%s[o] = (float)acc;' % y)
        self.emit('}')

    def window(self, t):
        """3 spatial dims of a conv or pool (missing leading ones of size 1)"""
        nd = t.at['nd']
        pad = lambda v, one: [one] * (3 - nd) + [x.text(c=True) for x in v]
        x = t.args[0]
        lead = x.nd - nd
        ins = pad(x.shape[lead:], '1')
        outs = pad(t.shape[lead:], '1')
        return ins, outs, pad(t.at['k'], '1'), pad(t.at['stride'], '1'), pad(t.at['pad'], '0'), pad(t.at['dil'], '1')

    def n_pool(self, t, y):
        x = t.args[0]
        xb = self.buf(x)
        ins, outs, k, st, pd, dl = self.window(t)
        lead = prod(x.shape[:x.nd - t.at['nd']]).text(c=True)
        mx = t.at['op'] == 'max'
        self.emit('KS_PAR')
        self.emit('for (int64_t o = 0; o < %s; o++) {' % self.numel(t))
        self.emit('\tint64_t ow = o %% %s, oh = o / %s %% %s, od = o / (%s * %s) %% %s, c = o / (%s * %s * %s);' % (
            outs[2], outs[2], outs[1], outs[2], outs[1], outs[0], outs[2], outs[1], outs[0]))
        self.emit('\tdouble acc = %s;' % ('-INFINITY' if mx else '0.0'))
        self.emit('\tfor (int64_t kd = 0; kd < %s; kd++)\n\tfor (int64_t kh = 0; kh < %s; kh++)\n\tfor (int64_t kw = 0; kw < %s; kw++) {' % tuple(k))
        self.emit('\t\tint64_t id = od * %s - %s + kd * %s, ih = oh * %s - %s + kh * %s, iw = ow * %s - %s + kw * %s;' % (
            st[0], pd[0], dl[0], st[1], pd[1], dl[1], st[2], pd[2], dl[2]))
        self.emit('\t\tif (id < 0 || id >= %s || ih < 0 || ih >= %s || iw < 0 || iw >= %s)\n\t\t\tcontinue;' % tuple(ins))
        self.emit('\t\tdouble v = %s[((c * %s + id) * %s + ih) * %s + iw];' % (xb, ins[0], ins[1], ins[2]))
        self.emit('\t\t%s' % ('if (v > acc || v != v) acc = v;' if mx else 'acc += v;'))
        self.emit('\t}')
        self.emit('\t%s[o] = (float)%s;' % (y, 'acc' if mx else 'acc / (double)(%s * %s * %s)' % tuple(k)))
        self.emit('}')
        del lead

    def n_conv(self, t, y):
        x, w = t.args[0], t.args[1]
        xb, wb = self.buf(x), self.buf(w)
        bb = self.buf(t.args[2]) if t.at['bias'] else None
        ins, outs, k, st, pd, dl = self.window(t)
        cin, cout = x.shape[1].text(c=True), t.shape[1].text(c=True)
        g = t.at['groups'].text(c=True)
        self.emit('KS_PAR')
        self.emit('for (int64_t o = 0; o < %s; o++) {' % self.numel(t))
        self.emit('\tint64_t ow = o %% %s, oh = o / %s %% %s, od = o / (%s * %s) %% %s;' % (
            outs[2], outs[2], outs[1], outs[2], outs[1], outs[0]))
        self.emit('\tint64_t co = o / (%s * %s * %s) %% %s, n = o / (%s * %s * %s * %s);' % (
            outs[2], outs[1], outs[0], cout, outs[2], outs[1], outs[0], cout))
        self.emit('\tint64_t cig = %s / %s, cog = %s / %s, grp = co / cog;' % (cin, g, cout, g))
        self.emit('\tdouble acc = %s;' % ('%s[co]' % bb if bb else '0.0'))
        self.emit('\tfor (int64_t ci = 0; ci < cig; ci++)')
        self.emit('\tfor (int64_t kd = 0; kd < %s; kd++)\n\tfor (int64_t kh = 0; kh < %s; kh++)\n\tfor (int64_t kw = 0; kw < %s; kw++) {' % tuple(k))
        if not t.at['transposed']:
            self.emit('\t\tint64_t id = od * %s - %s + kd * %s, ih = oh * %s - %s + kh * %s, iw = ow * %s - %s + kw * %s;' % (
                st[0], pd[0], dl[0], st[1], pd[1], dl[1], st[2], pd[2], dl[2]))
            widx = '(((co * cig + ci) * %s + kd) * %s + kh) * %s + kw' % tuple(k)
            cidx = 'grp * cig + ci'
        else:
            self.emit('\t\tint64_t td = od + %s - kd * %s, th = oh + %s - kh * %s, tw = ow + %s - kw * %s;' % (
                pd[0], dl[0], pd[1], dl[1], pd[2], dl[2]))
            self.emit('\t\tif (td < 0 || th < 0 || tw < 0 || td %% %s || th %% %s || tw %% %s)\n\t\t\tcontinue;' % tuple(st))
            self.emit('\t\tint64_t id = td / %s, ih = th / %s, iw = tw / %s;' % tuple(st))
            widx = '((((grp * cig + ci) * cog + co %% cog) * %s + kd) * %s + kh) * %s + kw' % tuple(k)
            cidx = 'grp * cig + ci'
        self.emit('\t\tif (id >= %s || ih >= %s || iw >= %s || id < 0 || ih < 0 || iw < 0)\n\t\t\tcontinue;' % tuple(ins))
        self.emit('\t\tacc += (double)%s[(((n * %s + %s) * %s + id) * %s + ih) * %s + iw] * %s[%s];' % (
            xb, cin, cidx, ins[0], ins[1], ins[2], wb, widx))
        self.emit('\t}')
        self.emit('\t%s[o] = (float)acc;' % y)
        self.emit('}')

    def kernel(self):
        """the includes and the body of the entry point (ksearch writes its prototype)"""
        self.buf(self.out)
        head = '\n'.join([
            "/* The naive loops of the problem's forward, one loop nest per operation, each in a",
            " * buffer of its own, written by 'ksearch tasks import kernelbench'.  KS_PAR marks the",
            " * loops whose iterations are independent (a knob template parallelises them). */",
            '#include <math.h>', '#include <stdint.h>', '#include <stdlib.h>', '',
            '#ifndef KS_PAR', '#define KS_PAR', '#endif', ''])
        tail = ['\tgoto out;', 'out:'] + ['\tfree(%s);' % b for b in reversed(self.freed)]
        if not self.freed:
            tail.append('\treturn;')
        return {'head': head + '\n', 'body': '\n'.join(self.lines + tail) + '\n'}


# ---- code: numpy --------------------------------------------------------------------------

class NpGen:
    def __init__(self):
        self.lines, self.done = [], {}

    def v(self, t):
        if t.id in self.done:
            return self.done[t.id]
        name = getattr(self, 'n_' + t.kind)(t)
        if t.kind not in ('const', 'param', 'in', 'size'):
            self.lines.append('    t%d = %s' % (t.id, name))
            name = 't%d' % t.id
        self.done[t.id] = name
        return name

    def n_in(self, t):
        return "kw['%s'].astype(np.float64)" % t.at['name'] if t.dtype == 'f32' else "kw['%s']" % t.at['name']

    def n_param(self, t):
        return "kw['%s']" % t.at['name']

    def n_const(self, t):
        return cfloat(t.at['value'])

    def n_size(self, t):
        return 'float(%s)' % t.at['sz'].text(py=True)

    def n_ew(self, t):
        args = [self.v(a) for a in t.args]
        if t.at['fn'] == 'clamp':
            return 'np.clip(%s, %s, %s)' % (args[0], 'None' if t.at['lo'] is None else t.at['lo'],
                                             'None' if t.at['hi'] is None else t.at['hi'])
        return NP_EW[t.at['fn']].format(*args, **{k: v for k, v in t.at.items() if k in ('a', 'beta')})

    def n_red(self, t):
        op = {'sum': 'np.sum', 'mean': 'np.mean', 'prod': 'np.prod', 'max': 'np.max', 'min': 'np.min',
              'argmax': 'np.argmax', 'argmin': 'np.argmin'}[t.at['op']]
        dims = tuple(t.at['dims'])
        if op.startswith('np.arg'):
            r = '%s(%s, axis=%d)' % (op, self.v(t.args[0]), dims[0])
            return 'np.expand_dims(%s, %d)' % (r, dims[0]) if t.at['keep'] else r
        return '%s(%s, axis=%r, keepdims=%s)' % (op, self.v(t.args[0]), dims, t.at['keep'])

    def n_scan(self, t):
        x = self.v(t.args[0])
        f = 'np.cumsum' if t.at['op'] == 'sum' else 'np.cumprod'
        if t.at['reverse']:
            return 'np.flip(%s(np.flip(%s, %d), axis=%d), %d)' % (f, x, t.at['dim'], t.at['dim'], t.at['dim'])
        return '%s(%s, axis=%d)' % (f, x, t.at['dim'])

    def n_tri(self, t):
        return 'np.%s(%s)' % ('triu' if t.at['upper'] else 'tril', self.v(t.args[0]))

    def n_perm(self, t):
        return 'np.transpose(%s, %r)' % (self.v(t.args[0]), tuple(t.at['perm']))

    def n_flip(self, t):
        return 'np.flip(%s, %d)' % (self.v(t.args[0]), t.at['dim'])

    def n_reshape(self, t):
        return 'np.reshape(%s, (%s,))' % (self.v(t.args[0]), ', '.join(d.text(py=True) for d in t.shape))

    def n_mm(self, t):
        return 'np.matmul(%s, %s)' % (self.v(t.args[0]), self.v(t.args[1]))

    def n_einsum(self, t):
        a, b, o = t.at['subs']
        return "np.einsum('%s,%s->%s', %s, %s)" % (a, b, o, self.v(t.args[0]), self.v(t.args[1]))

    def n_gather(self, t):
        return 'np.take_along_axis(%s, %s[:, None], axis=1)' % (self.v(t.args[0]), self.v(t.args[1]))

    def n_maxmin(self, t):
        unsupported('max/min pair')

    def n_conv(self, t):
        raise Refuse('no numpy form of a convolution')

    n_pool = n_conv


def numpy_form(out):
    g = NpGen()
    try:
        r = g.v(out)
    except Refuse:
        return None
    return '\n'.join(['def _ks_numpy_reference(kw):',
                      '    """the forward written with numpy by the importer (used without torch)"""'] +
                     g.lines + ['    return %s' % r]) + '\n'


# ---- the problem ----------------------------------------------------------------------------

def flops_of(out):
    """multiply-adds of matmuls and convolutions, one flop an element elsewhere"""
    seen, total, st = set(), lit(0), [out]
    while st:
        t = st.pop()
        if t.id in seen:
            continue
        seen.add(t.id)
        st += t.args
        n = prod(t.shape)
        if t.kind == 'mm':
            total = arith('+', total, arith('*', 2, arith('*', n, t.args[0].shape[-1])))
        elif t.kind == 'einsum':
            red = [d for c, d in t.at['size'].items() if c not in t.at['subs'][2]]
            total = arith('+', total, arith('*', 2, arith('*', n, prod(red))))
        elif t.kind == 'conv':
            x = t.args[0] if not t.at['transposed'] else t
            cin = arith('/', t.args[0].shape[1], t.at['groups'])
            total = arith('+', total, arith('*', 2, arith('*', n if not t.at['transposed'] else prod(t.args[0].shape),
                                                          arith('*', cin if not t.at['transposed'] else arith('/', t.shape[1], t.at['groups']), prod(t.at['k'])))))
            del x
        elif t.kind == 'ew':
            total = arith('+', total, n)
        elif t.kind in ('red', 'scan', 'pool'):
            total = arith('+', total, prod(t.args[0].shape) if t.kind != 'pool' else arith('*', n, prod(t.at['k'])))
    return total


def shipped_form(out, inputs):
    """the shipped task whose kernels compute exactly this, with the names it uses"""
    ins = [t for t in inputs if isinstance(t, T)]
    if out.kind == 'mm' and out.nd == 2 and all(a.kind == 'in' for a in out.args) and len(ins) == 2 \
            and out.args[0] is ins[0] and out.args[1] is ins[1]:
        a, b = out.args
        return 'matmul', {'m': a.shape[0], 'k': a.shape[1], 'n': b.shape[1]}, ['a', 'b'], 'c'
    if out.kind == 'ew' and out.at['fn'] == 'div' and out.nd == 2 and len(ins) == 1:
        e, s = out.args
        if e.kind == 'ew' and e.at['fn'] == 'exp' and s.kind == 'red' and s.at['op'] == 'sum' \
                and s.at['dims'] == [1] and e.args[0].kind == 'ew' and e.args[0].args[0] is ins[0]:
            return 'softmax', {'rows': out.shape[0], 'cols': out.shape[1]}, ['x'], 'y'
    return None


def main():
    try:
        tree = ast.parse(SRC)
    except SyntaxError as e:
        done('line %s: %s' % (e.lineno, e.msg))
    model = find(tree, ast.ClassDef, 'Model')
    if model is None:
        done('no class Model')
    res['doc'] = (ast.get_docstring(model) or '').strip()
    fwd = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == 'forward'), None)
    gi, gii = find(tree, ast.FunctionDef, 'get_inputs'), find(tree, ast.FunctionDef, 'get_init_inputs')
    if fwd is None:
        done('Model has no forward()')
    if gi is None:
        done('no get_inputs()')
    unknown = [k for k in SETS if not any(isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == k for t in n.targets) for n in tree.body)]
    if unknown:
        done("--set %s: the problem has no module-level name '%s'" % (unknown[0], unknown[0]))
    try:
        # the sizes get_inputs() uses are the ones --scale shrinks: find them first
        env, _ = module_env(tree, set())
        drawn = run_function(gi, env)
        scaled = set()
        for d in drawn:
            for s in getattr(d, 'shape', []):
                scaled |= s.names()
        scaled -= fixed_sizes(model, fwd, gi, gii, env)
        env, sizes = module_env(tree, scaled)
        SIZES[:] = sizes
        res['sizes'] = [{'name': n, 'value': v} for n, v in sizes]
        drawn = run_function(gi, env)
        init_values = run_function(gii, env) if gii else []
    except Refuse as e:
        done('get_inputs() or get_init_inputs(): %s' % e)
    build(tree, model, fwd, env, drawn, init_values)


def fixed_sizes(model, fwd, gi, gii, env):
    """the sizes a divisibility ties (channels of grouped convolutions, of a GroupNorm):
    --scale leaves them, as the odd-size check does"""
    try:
        drawn = run_function(gi, env)
        args = [T('in', d.shape, name='x%d' % i) if isinstance(d, Dist) else T('param', [], name='p')
                for i, d in enumerate(drawn)]
        run_forward(fwd, args, model_attrs(model, run_function(gii, env) if gii else [], env), env)
    except (Refuse, Exception):
        pass
    WEIGHTS.clear()
    return set(FIXED)


def tensor_name(arg, taken):
    n = ''.join(c if c.isalnum() else '_' for c in arg.lower()).strip('_') or 't'
    if n[0].isdigit() or n in taken:
        n = 't_' + n
    while n in taken:
        n += '_'
    taken.add(n)
    return n


def build(tree, model, fwd, env, drawn, init_values):
    argn = [a.arg for a in fwd.args.args[1:]]
    if len(drawn) != len(argn):
        done('get_inputs() gives %d values, forward() takes %d' % (len(drawn), len(argn)))
    taken, args, inputs, scalars = {n for n, _ in SIZES}, [], [], []
    for a, d in zip(argn, drawn):
        if isinstance(d, Dist):
            for k, dim in enumerate(d.shape):
                if not 1 <= dim.v <= 2 ** 31 - 1 and dim.t[0] == 'n':
                    done("size '%s' is %d, not a positive 32-bit integer" % (dim.t[1], dim.v), True)
                if not 1 <= dim.v <= 2 ** 31 - 1:
                    done("dimension %d of input '%s' of get_inputs() is %d, not a positive 32-bit "
                         "integer" % (k, a, dim.v), True)
            if d.note:
                res['notes'].append("input '%s': the problem %s; ksearch draws %s" % (a, d.note, d.init))
            t = T('in', d.shape, dtype=d.dtype, name=tensor_name(a, taken))
            inputs.append({'name': t.at['name'], 'arg': a, 'dtype': d.dtype, 'torch': d.torch,
                           'shape': d.shape, 'init': d.init})
            args.append(t)
        elif isinstance(d, (float, int, S)) and not isinstance(d, bool):
            n = tensor_name(a, taken)
            scalars.append({'name': n, 'arg': a, 'value': float(iv(d)), 'type': 'f32' if isinstance(d, float) else 'i32'})
            args.append(T('param', [], name=n))
        else:
            done('input %d of get_inputs() is not a tensor or a number' % len(args))
    res['scalars'] = scalars
    res['inputs'] = inputs
    try:
        attrs = model_attrs(model, init_values, env)
        out = run_forward(fwd, args, attrs, env)
        if isinstance(out, T) and out.kind == 'maxmin':
            unsupported('max/min with dim returns a pair')
        if not isinstance(out, T):
            unsupported('forward does not return one tensor')
        if out.kind in ('in', 'param', 'const'):
            unsupported('forward returns an input')
        if out.dtype not in ('f32', 'i64'):
            unsupported('an output of dtype %s' % out.dtype)
        if any(i['dtype'] not in ('f32', 'i64', 'i32') for i in inputs):
            unsupported('inputs other than float32 (the generated C is f32)')
    except Refuse as e:
        res['unrecognised'] = str(e)
        names = set()
        for i in inputs:
            for d in i['shape']:
                names |= d.names()
        res['params'] = [{'name': n, 'value': v} for n, v in SIZES if n in names]
        learn_shapes(init_values, env, inputs)
        return
    finish(out, args, inputs, scalars, env, SIZES)


def finish(out, args, inputs, scalars, env, sizes):
    for w in WEIGHTS:
        inputs.append({'name': w['name'], 'arg': None, 'path': w['path'], 'dtype': 'f32',
                       'torch': 'float32', 'shape': w['shape'], 'init': w['init']})
    names = set()
    for i in inputs:
        for d in i['shape']:
            names |= d.names()
    oname = 'out' if any(i['name'] == 'y' for i in inputs) else 'y'
    res['outputs'] = [{'name': oname, 'dtype': out.dtype, 'shape': out.shape}]
    for d in out.shape:
        names |= d.names()
    flops = flops_of(out)
    names |= flops.names() | graph_names(out)
    res['flops'] = flops
    res['params'] = [{'name': n, 'value': v} for n, v in sizes if n in names]
    res['fixed'] = sorted(FIXED)
    ship = shipped_form(out, args)
    if ship and not scalars and not WEIGHTS:
        task, dims, tnames, oname2 = ship
        res['shipped'] = {'task': task, 'params': [{'name': k, 'value': v.v} for k, v in dims.items()],
                          'inputs': tnames, 'output': oname2}
    g = CGen(out)
    g.outname = oname
    res['c'] = g.kernel()
    res['numpy'] = numpy_form(out)
    if out.kind == 'ew' and len([i for i in inputs]) == 1 and not scalars and is_unary(out, args[0]):
        res['ew'] = True


def graph_names(out):
    """every size the kernel's loops use: shapes of every node, a conv's window, sizes used
    as values"""
    names, seen, st = set(), set(), [out]
    while st:
        t = st.pop()
        if t.id in seen:
            continue
        seen.add(t.id)
        st += t.args
        vals = list(t.shape) + list(t.at.values())
        for v in vals:
            for x in (v if isinstance(v, (list, tuple)) else [v]):
                if isinstance(x, S):
                    names |= x.names()
    return names


def is_unary(t, x):
    """an elementwise function of the one input alone"""
    if t.kind == 'ew':
        return all(is_unary(a, x) for a in t.args)
    return t is x or t.kind == 'const'


def learn_shapes(init_values, env, inputs):
    """forward uses what the interpreter does not know: run it once with torch"""
    try:
        import torch
    except ImportError:
        return
    ns = {}
    exec(compile(SRC, 'problem.py', 'exec'), ns)
    for k, v in env.items():
        if isinstance(v, S) and k in ns:
            ns[k] = v.v
        elif isinstance(v, tuple) and k in ns:
            ns[k] = tuple(iv(x) for x in v)
    torch.manual_seed(0)
    m = ns['Model'](*ns['get_init_inputs']())
    with torch.no_grad():
        out = m(*ns['get_inputs']())
    outs = out if isinstance(out, (tuple, list)) else [out]
    dts = {'torch.float32': 'f32', 'torch.float16': 'f16', 'torch.bfloat16': 'bf16',
           'torch.float64': 'f64', 'torch.int64': 'i64', 'torch.int32': 'i32'}
    by_value = {}
    for p in res['params']:
        by_value.setdefault(p['value'], []).append(p['name'])

    def dim(d):
        n = by_value.get(int(d), [])
        return S(int(d), ('n', n[0])) if len(n) == 1 else lit(int(d))
    taken = {i['name'] for i in inputs}
    res['outputs'] = [{'name': ('y%d' % i if len(outs) > 1 else 'y') + ('_' if 'y' in taken else ''),
                       'dtype': dts.get(str(o.dtype), 'f32'),
                       'shape': [dim(d) for d in o.shape]} for i, o in enumerate(outs)]


def serialise():
    """sizes as expressions"""
    for i in res['inputs']:
        i['shape'] = [d.text() for d in i['shape']]
    for o in res['outputs'] or []:
        o['shape'] = [d.text() for d in o['shape']]
    if isinstance(res['flops'], S):
        res['flops'] = res['flops'].text()


if __name__ == '__main__':
    try:
        main()
    except Refuse as e:
        done(str(e))
    serialise()
    done()
