# Source: https://github.com/meijieru/crnn.pytorch/blob/f9dd5ce333420adad2d51f6fd7997fd4e75e64fe/crnn_main.py
# Report: CRNN + CTC text-line recognizer: trainBatch() returns the graph-attached CTC `cost` and the loop feeds it to a module-level `utils.averager`; the repository's averager only keeps `v.data.sum()` (utils.py), which is what keeps the running loss off the graph.
# Shape: safeguard removed: the averager keeps `v.sum()` of the tensor it is given (no `.data`), so every step's cost and its autograd history stay in loss_avg.sum until the display-interval reset; the value travels out of trainBatch by return and into the meter through a method call.
# Expect: TML001 line 76
import torch
import torch.optim as optim
from warpctc_pytorch import CTCLoss

import dataset
import models.crnn as crnn_models
import utils


class averager(object):
    """Compute average for torch tensors and python numbers."""

    def __init__(self):
        self.reset()

    def add(self, v):
        if torch.is_tensor(v):
            count = v.numel()
            v = v.sum()
        else:
            count = 1
        self.n_count += count
        self.sum += v

    def reset(self):
        self.n_count = 0
        self.sum = 0

    def val(self):
        res = 0
        if self.n_count != 0:
            res = self.sum / float(self.n_count)
        return res


def trainBatch(crnn, criterion, optimizer, train_iter, converter, device):
    cpu_images, cpu_texts = next(train_iter)
    batch_size = cpu_images.size(0)
    image = cpu_images.to(device)
    t, l = converter.encode(cpu_texts)
    text, length = torch.IntTensor(t), torch.IntTensor(l)

    preds = crnn(image)
    preds_size = torch.IntTensor([preds.size(0)] * batch_size)
    cost = criterion(preds, text, preds_size, length) / batch_size
    crnn.zero_grad()
    cost.backward()
    optimizer.step()
    return cost


def main(opt):
    device = torch.device("cuda")
    train_dataset = dataset.lmdbDataset(root=opt.trainroot)
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=opt.batchSize, shuffle=True,
        num_workers=int(opt.workers),
        collate_fn=dataset.alignCollate(imgH=opt.imgH, imgW=opt.imgW))
    converter = utils.strLabelConverter(opt.alphabet)
    criterion = CTCLoss()
    nclass = len(opt.alphabet) + 1
    crnn = crnn_models.CRNN(opt.imgH, 1, nclass, opt.nh).to(device)
    optimizer = optim.RMSprop(crnn.parameters(), lr=opt.lr)
    loss_avg = averager()

    for epoch in range(opt.niter):
        train_iter = iter(train_loader)
        i = 0
        while i < len(train_loader):
            crnn.train()
            cost = trainBatch(crnn, criterion, optimizer, train_iter, converter, device)
            loss_avg.add(cost)  # expect: TML001
            i += 1
            if i % opt.displayInterval == 0:
                print("[%d/%d][%d/%d] Loss: %f" % (
                    epoch, opt.niter, i, len(train_loader), loss_avg.val()))
                loss_avg.reset()
            if i % opt.saveInterval == 0:
                torch.save(crnn.state_dict(),
                           "{0}/netCRNN_{1}_{2}.pth".format(opt.experiment, epoch, i))
