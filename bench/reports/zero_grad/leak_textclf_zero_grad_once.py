# Source: https://github.com/FreedomIntelligence/TextClassificationBenchmark/issues/20
# Report: the benchmark's main training script called optimizer.zero_grad() a single time, right after building the optimizer, and never inside the batch loop, so every step used the sum of all earlier gradients
# Shape: script-level loop over a torchtext iterator; gradient clipping goes through a utils helper that takes the optimizer; the only reset sits before the loop
# Expect: TML002 line 41
import os

import torch
import torch.optim as optim
from torch.nn.modules.loss import NLLLoss

import models
import opts
import utils


def clip_gradient(optimizer, grad_clip):
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None:
                param.grad.data.clamp_(-grad_clip, grad_clip)


if "CUDA_VISIBLE_DEVICES" not in os.environ:
    os.environ["CUDA_VISIBLE_DEVICES"] = "0"
opt = opts.parse_opt()
train_iter, test_iter = utils.loadData(opt)

model = models.setup(opt).cuda()
model.train()
optimizer = optim.Adam(model.parameters(), lr=opt.learning_rate)
optimizer.zero_grad()
loss_fun = NLLLoss()

for index, batch in enumerate(train_iter):
    if len(batch.text[0]) != opt.batch_size:
        continue
    predicted = model(batch.text[0])
    loss = loss_fun(predicted, batch.label)
    loss.backward()
    clip_gradient(optimizer, opt.grad_clip)
    optimizer.step()  # expect: TML002
    if index % 100 == 0:
        print("step %d loss : %.5f" % (index, loss.item()))

utils.evaluation(model, test_iter)
