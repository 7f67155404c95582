"""Llama 2 from its published config (Touvron et al. 2023; the 7B model:
hidden 4096, MLP 11008, 32 layers, 32 heads, vocabulary 32000): random
weights, nothing downloaded. Parameter names follow the reference Hugging Face
implementation (model.layers.N.self_attn.q_proj, mlp.gate_proj, ...), with
rotary position embeddings and RMSNorm, no biases, and an untied LM head.
Built on device="meta", the 7B model has shapes but no storage."""

import torch
from torch import nn

LLAMA2_7B = dict(n_layer=32, n_head=32, hidden=4096, mlp=11008, vocab_size=32000)


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-5, **kw):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden, **kw))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return self.weight * (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype)


def _rotate(x, cos, sin):
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-b, a), dim=-1) * sin


class LlamaAttention(nn.Module):
    def __init__(self, hidden, n_head, **kw):
        super().__init__()
        self.n_head = n_head
        self.q_proj = nn.Linear(hidden, hidden, bias=False, **kw)
        self.k_proj = nn.Linear(hidden, hidden, bias=False, **kw)
        self.v_proj = nn.Linear(hidden, hidden, bias=False, **kw)
        self.o_proj = nn.Linear(hidden, hidden, bias=False, **kw)

    def forward(self, x):
        b, t, c = x.shape
        d = c // self.n_head
        q, k, v = ((p(x).view(b, t, self.n_head, d).transpose(1, 2))
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2, device=x.device).float() / d))
        ang = torch.outer(torch.arange(t, device=x.device).float(), inv)
        cos, sin = (torch.cat((f, f), dim=-1).to(x.dtype) for f in (ang.cos(), ang.sin()))
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        att = (q @ k.transpose(-2, -1)) / d ** 0.5
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        return self.o_proj((att @ v).transpose(1, 2).reshape(b, t, c))


class LlamaMLP(nn.Module):
    def __init__(self, hidden, mlp, **kw):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, mlp, bias=False, **kw)
        self.up_proj = nn.Linear(hidden, mlp, bias=False, **kw)
        self.down_proj = nn.Linear(mlp, hidden, bias=False, **kw)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden, n_head, mlp, **kw):
        super().__init__()
        self.input_layernorm = RMSNorm(hidden, **kw)
        self.self_attn = LlamaAttention(hidden, n_head, **kw)
        self.post_attention_layernorm = RMSNorm(hidden, **kw)
        self.mlp = LlamaMLP(hidden, mlp, **kw)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, n_layer, n_head, hidden, mlp, vocab_size, **kw):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden, **kw)
        self.layers = nn.ModuleList(LlamaDecoderLayer(hidden, n_head, mlp, **kw)
                                    for _ in range(n_layer))
        self.norm = RMSNorm(hidden, **kw)


class Llama(nn.Module):
    """LlamaForCausalLM's shape: forward(input_ids) -> logits. `device` and
    `dtype` go to every parameter (device="meta": shapes only)."""

    def __init__(self, n_layer, n_head, hidden, mlp, vocab_size, device=None, dtype=None):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.model = LlamaModel(n_layer, n_head, hidden, mlp, vocab_size, **kw)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False, **kw)

    def forward(self, input_ids):
        x = self.model.embed_tokens(input_ids)
        for layer in self.model.layers:
            x = layer(x)
        return self.lm_head(self.model.norm(x))


def llama2_7b_meta(batch=1, seq=4096):
    """Llama-2-7B in bf16 on meta and a batch x seq of token ids there
    (examples/llama2_7b_fsdp.coll: micro-batch 1 x 4096)."""
    model = Llama(**LLAMA2_7B, device="meta", dtype=torch.bfloat16)
    return model, (torch.zeros(batch, seq, dtype=torch.long, device="meta"),)
