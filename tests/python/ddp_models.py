"""The four model kinds the DDP parity tests train (docs/torch.md,
"Parity"): small, so that 20 steps of each take about a second; each with
its batches (every rank its own) and loss."""

import torch

from collc.torch.models.gpt2 import GPT2


class Cnn(torch.nn.Module):
    """Two convolutions with BatchNorm (running-statistics buffers) and a head."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
            torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(2))
        self.head = torch.nn.Linear(32, 5)

    def forward(self, x):
        return self.head(self.body(x).flatten(1))


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(6, 12, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(12, 3)

    def forward(self, x):
        return self.head(self.lstm(x)[0][:, -1])


class Frozen(torch.nn.Module):
    """An MLP whose first layer is frozen (requires_grad=False): DDP leaves
    it out, and so does collc."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(10, 16)
        self.embed.requires_grad_(False)
        self.hidden = torch.nn.Linear(16, 16)
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(torch.relu(self.embed(x)))))


def gpt():
    return GPT2(n_layer=2, n_head=2, n_embd=32, vocab_size=64, n_ctx=16)


KINDS = {
    # name: (factory, batch of generator g -> (inputs, targets), loss)
    "gpt": (gpt,
            lambda g: (torch.randint(0, 64, (2, 16), generator=g),
                       torch.randint(0, 64, (2, 16), generator=g)),
            lambda out, y: torch.nn.functional.cross_entropy(out.reshape(-1, 64), y.reshape(-1))),
    "cnn": (Cnn,
            lambda g: (torch.randn(4, 1, 8, 8, generator=g), torch.randint(0, 5, (4,), generator=g)),
            torch.nn.functional.cross_entropy),
    "lstm": (Lstm,
             lambda g: (torch.randn(3, 5, 6, generator=g), torch.randn(3, 3, generator=g)),
             torch.nn.functional.mse_loss),
    "frozen": (Frozen,
               lambda g: (torch.randn(8, 10, generator=g), torch.randint(0, 4, (8,), generator=g)),
               torch.nn.functional.cross_entropy),
}


def new_model(kind, seed=0):
    """Kind `kind` with weights from `seed` (rank 0's reach the others by
    the wrappers' broadcast; every rank starts from its own here so that the
    broadcast is what makes them equal)."""
    torch.manual_seed(seed)
    return KINDS[kind][0]()


def batches(kind, rank, steps, seed=0):
    g = torch.Generator().manual_seed(seed * 1000 + 17 + rank)
    return [KINDS[kind][1](g) for _ in range(steps)]
