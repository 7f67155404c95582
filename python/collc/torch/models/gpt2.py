"""GPT-2 from its published config (Radford et al. 2019; the config of the
124M checkpoint, and GPT-2 XL's): random weights, nothing downloaded.
Parameter names and shapes follow the reference implementation
(transformer.h.N.attn.c_attn with Conv1D weights stored [in, out]), and the
LM head is tied to the token embedding, as GPT-2 ties them. Built on
device="meta", a model has shapes but no storage, so GPT-2 XL costs no
memory to trace (docs/torch.md)."""

import math

import torch
from torch import nn

# The published GPT-2 configs (124M and XL, 1.5B).
GPT2_124M = dict(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, n_ctx=1024)
GPT2_XL = dict(n_layer=48, n_head=25, n_embd=1600, vocab_size=50257, n_ctx=1024)
# The 1.3B GPT of examples/megatron_tp2_pp4.coll: 24 layers, hidden 2048, 16
# heads, sequence 2048, GPT-2's vocabulary padded to 50304 (a multiple of 128,
# as Megatron-LM pads it).
GPT_1_3B = dict(n_layer=24, n_head=16, n_embd=2048, vocab_size=50304, n_ctx=2048)


class Conv1D(nn.Module):
    """GPT-2's linear layer: weight [in, out]."""

    def __init__(self, n_in, n_out, device=None, dtype=None):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out, device=device, dtype=dtype) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out, device=device, dtype=dtype))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(
            *x.shape[:-1], self.weight.shape[1])


class Attention(nn.Module):
    def __init__(self, n_embd, n_head, **kw):
        super().__init__()
        self.n_head = n_head
        self.c_attn = Conv1D(n_embd, 3 * n_embd, **kw)
        self.c_proj = Conv1D(n_embd, n_embd, **kw)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).reshape(b, t, c))


class MLP(nn.Module):
    def __init__(self, n_embd, **kw):
        super().__init__()
        self.c_fc = Conv1D(n_embd, 4 * n_embd, **kw)
        self.c_proj = Conv1D(4 * n_embd, n_embd, **kw)

    def forward(self, x):
        return self.c_proj(nn.functional.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, **kw):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd, **kw)
        self.attn = Attention(n_embd, n_head, **kw)
        self.ln_2 = nn.LayerNorm(n_embd, **kw)
        self.mlp = MLP(n_embd, **kw)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, n_layer, n_head, n_embd, vocab_size, n_ctx, **kw):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd, **kw)
        self.wpe = nn.Embedding(n_ctx, n_embd, **kw)
        self.h = nn.ModuleList(Block(n_embd, n_head, **kw) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd, **kw)


class GPT2(nn.Module):
    """GPT2LMHeadModel's shape: forward(input_ids) -> logits. `device` and
    `dtype` go to every parameter (device="meta": shapes only)."""

    def __init__(self, n_layer, n_head, n_embd, vocab_size, n_ctx, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.transformer = Transformer(n_layer, n_head, n_embd, vocab_size, n_ctx, **kw)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False, **kw)
        self.lm_head.weight = self.transformer.wte.weight  # tied, as GPT-2 ties them

    def forward(self, input_ids):
        tr = self.transformer
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = tr.wte(input_ids) + tr.wpe(pos)
        for block in tr.h:
            x = block(x)
        return self.lm_head(tr.ln_f(x))


def gpt2_124m(seq=16, batch=1, seed=0):
    """The factory for `python3 -m collc.torch`: GPT-2 124M and a batch of
    random token ids (batch x seq)."""
    torch.manual_seed(seed)
    model = GPT2(**GPT2_124M)
    ids = torch.randint(0, GPT2_124M["vocab_size"], (batch, seq))
    return model, (ids,)


def on_meta(config, batch, seq, dtype=torch.float32):
    """A GPT of `config` on the meta device and a batch x seq of token ids
    there: shapes only, nothing allocated, so any size traces."""
    model = GPT2(**config, device="meta", dtype=dtype)
    return model, (torch.zeros(batch, seq, dtype=torch.long, device="meta"),)


def gpt2_124m_meta():
    """GPT-2 124M on meta, micro-batch 8 x 1024 tokens (examples/gpt2_ddp.coll)."""
    return on_meta(GPT2_124M, 8, 1024)


def gpt2_xl_meta():
    """GPT-2 XL (1.5B) on meta, micro-batch 1 x 1024 tokens."""
    return on_meta(GPT2_XL, 1, 1024)
