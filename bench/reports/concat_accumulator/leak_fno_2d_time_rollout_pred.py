# Source: https://github.com/zongyi-li/fourier_neural_operator/blob/fd7b0ded5370861c43cc1e014ff70e0d047d6fe9/fourier_2d_time.py
# Report: audited training code: the FNO 2D+time Navier-Stokes script rolls the operator out autoregressively over T steps and grows the full prediction with pred = torch.cat((pred, im), -1) at every rollout step, in both the training and the no_grad test loop
# Shape: as in the repository: pred is re-concatenated at each of the T/step rollout steps (quadratic copying of the growing trajectory); the sliding input window xx = torch.cat((xx[..., step:], im)) keeps a constant size and the per-batch loss sum is backpropagated once, so only the pred lines are the pattern
# Expect: TML008 line 61; TML008 line 81
from timeit import default_timer

import torch
from torch.optim import Adam

from fno_models import FNO2d
from ns_data import make_ns_loaders


class LpLoss(object):
    def __init__(self, d=2, p=2, size_average=True, reduction=True):
        self.d = d
        self.p = p
        self.reduction = reduction
        self.size_average = size_average

    def rel(self, x, y):
        num_examples = x.size()[0]
        diff_norms = torch.norm(x.reshape(num_examples, -1) - y.reshape(num_examples, -1), self.p, 1)
        y_norms = torch.norm(y.reshape(num_examples, -1), self.p, 1)
        if self.reduction:
            if self.size_average:
                return torch.mean(diff_norms / y_norms)
            return torch.sum(diff_norms / y_norms)
        return diff_norms / y_norms

    def __call__(self, x, y):
        return self.rel(x, y)


device = torch.device('cuda')
ntrain, ntest = 1000, 200
batch_size, T, step = 20, 10, 1
epochs, learning_rate = 500, 0.001
scheduler_step, scheduler_gamma = 100, 0.5
modes, width = 12, 20
model = FNO2d(modes, modes, width).to(device)
train_loader, test_loader = make_ns_loaders('ns_V1e-3_N5000_T50.mat', ntrain, ntest, batch_size, T)

optimizer = Adam(model.parameters(), lr=learning_rate, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=scheduler_step, gamma=scheduler_gamma)
myloss = LpLoss(size_average=False)
for ep in range(epochs):
    model.train()
    t1 = default_timer()
    train_l2_step, train_l2_full = 0, 0
    for xx, yy in train_loader:
        loss = 0
        xx, yy = xx.to(device), yy.to(device)
        for t in range(0, T, step):
            y = yy[..., t:t + step]
            im = model(xx)
            loss += myloss(im.reshape(batch_size, -1), y.reshape(batch_size, -1))
            if t == 0:
                pred = im
            else:
                pred = torch.cat((pred, im), -1)  # expect: TML008
            xx = torch.cat((xx[..., step:], im), dim=-1)
        train_l2_step += loss.item()
        train_l2_full += myloss(pred.reshape(batch_size, -1), yy.reshape(batch_size, -1)).item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    test_l2_step, test_l2_full = 0, 0
    with torch.no_grad():
        for xx, yy in test_loader:
            loss = 0
            xx, yy = xx.to(device), yy.to(device)
            for t in range(0, T, step):
                y = yy[..., t:t + step]
                im = model(xx)
                loss += myloss(im.reshape(batch_size, -1), y.reshape(batch_size, -1))
                if t == 0:
                    pred = im
                else:
                    pred = torch.cat((pred, im), -1)  # expect: TML008
                xx = torch.cat((xx[..., step:], im), dim=-1)
            test_l2_step += loss.item()
            test_l2_full += myloss(pred.reshape(batch_size, -1), yy.reshape(batch_size, -1)).item()
    t2 = default_timer()
    scheduler.step()
    print(ep, t2 - t1, train_l2_step / ntrain / (T / step), train_l2_full / ntrain,
          test_l2_step / ntest / (T / step), test_l2_full / ntest)
