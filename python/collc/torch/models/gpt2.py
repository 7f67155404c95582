"""GPT-2 from its published config (Radford et al. 2019; the config of the
124M checkpoint): random weights, nothing downloaded. Parameter names and
shapes follow the reference implementation (transformer.h.N.attn.c_attn with
Conv1D weights stored [in, out]), and the LM head is tied to the token
embedding, as GPT-2 ties them."""

import math

import torch
from torch import nn

# The published GPT-2 124M config.
GPT2_124M = dict(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, n_ctx=1024)


class Conv1D(nn.Module):
    """GPT-2's linear layer: weight [in, out]."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(
            *x.shape[:-1], self.weight.shape[1])


class Attention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.c_attn = Conv1D(n_embd, 3 * n_embd)
        self.c_proj = Conv1D(n_embd, n_embd)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).reshape(b, t, c))


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = Conv1D(n_embd, 4 * n_embd)
        self.c_proj = Conv1D(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(nn.functional.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = Attention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):
    def __init__(self, n_layer, n_head, n_embd, vocab_size, n_ctx):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(n_ctx, n_embd)
        self.h = nn.ModuleList(Block(n_embd, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)


class GPT2(nn.Module):
    """GPT2LMHeadModel's shape: forward(input_ids) -> logits."""

    def __init__(self, n_layer, n_head, n_embd, vocab_size, n_ctx):
        super().__init__()
        self.transformer = Transformer(n_layer, n_head, n_embd, vocab_size, n_ctx)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied, as GPT-2 ties them

    def forward(self, input_ids):
        tr = self.transformer
        pos = torch.arange(input_ids.shape[1])
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
