# Source: https://github.com/FreedomIntelligence/TextClassificationBenchmark/issues/20
# Report: the benchmark's main training script called optimizer.zero_grad() a single time, right after building the optimizer, and never inside the batch loop, so every step used the sum of all earlier gradients
# Shape: same script, but the reset is repeated per batch with model.zero_grad() inside the loop (the one before the loop is kept, harmlessly)
# Expect: near-miss: must be silent
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
    model.zero_grad()
    predicted = model(batch.text[0])
    loss = loss_fun(predicted, batch.label)
    loss.backward()
    clip_gradient(optimizer, opt.grad_clip)
    optimizer.step()
    if index % 100 == 0:
        print("step %d loss : %.5f" % (index, loss.item()))

utils.evaluation(model, test_iter)
