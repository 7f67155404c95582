"""Traces a small model's DDP training step with collc.torch and compiles it."""

import json

import torch

import collc
from collc.torch import trace_ddp


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(1000, 256)
        self.fc1 = torch.nn.Linear(256, 1024)
        self.fc2 = torch.nn.Linear(1024, 256)
        self.head = torch.nn.Linear(256, 1000, bias=False)
        self.head.weight = self.embed.weight  # tied: averaged once

    def forward(self, ids):
        x = self.embed(ids)
        return self.head(x + self.fc2(torch.relu(self.fc1(x))))


torch.manual_seed(0)
ir = trace_ddp(Net(), (torch.randint(0, 1000, (2, 32)),), world=4, device_class="h100")
print(ir)
plan = collc.compile(ir, bucket="ddp")
for b in json.loads(plan.dump("json"))["buckets"]:
    print(f"bucket {b['bucket']}: {b['bytes']} bytes: {', '.join(b['tensors'])}")
