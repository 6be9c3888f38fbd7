# Source: https://github.com/twtygqyy/pytorch-SRResNet/blob/HEAD/main_srresnet.py
# Report: audit of the SRResNet training loop with the optional VGG content loss: the repository retains the graph only for content_loss.backward() and frees it with the final loss.backward(); this variant retains on the last backward too and keeps a few SR outputs per 100 iterations for a preview grid
# Shape: both backward calls pass retain_graph=True, so each iteration's saved activations survive backward; output[:4] (still attached) is appended every 100 iterations to a list that lives for the whole epoch, pinning each of those iterations' retained SRResNet graph
# Expect: TML006 line 43; TML001 line 47
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import models


class ContentModel(nn.Module):
    def __init__(self):
        super().__init__()
        vgg = models.vgg19(weights=models.VGG19_Weights.IMAGENET1K_V1)
        self.feature = nn.Sequential(*list(vgg.features.children())[:-1])

    def forward(self, x):
        return self.feature(x)


def adjust_learning_rate(base_lr, epoch, step=200):
    return base_lr * (0.1 ** (epoch // step))


def train(loader, optimizer, model, criterion, epoch, opt, net_content=None):
    for group in optimizer.param_groups:
        group["lr"] = adjust_learning_rate(opt.lr, epoch - 1, opt.step)
    model.train()
    previews = []
    for iteration, (lr_img, hr_img) in enumerate(loader, 1):
        lr_img, hr_img = lr_img.cuda(), hr_img.cuda()
        output = model(lr_img)
        loss = criterion(output, hr_img)
        if opt.vgg_loss:
            content_input = net_content(output)
            content_target = net_content(hr_img).detach()
            content_loss = criterion(content_input, content_target)

        optimizer.zero_grad()
        if opt.vgg_loss:
            net_content.zero_grad()
            content_loss.backward(retain_graph=True)
        loss.backward(retain_graph=True)  # expect: TML006
        optimizer.step()

        if iteration % 100 == 0:
            previews.append(output[:4])  # expect: TML001
            msg = "===> Epoch[{}]({}/{}): Loss: {:.5}".format(epoch, iteration, len(loader), loss.item())
            if opt.vgg_loss:
                msg += " Content_loss {:.5}".format(content_loss.item())
            print(msg)
    return previews


def main(opt, train_set, model):
    loader = DataLoader(train_set, batch_size=opt.batchSize, shuffle=True, num_workers=opt.threads)
    net_content = ContentModel().cuda() if opt.vgg_loss else None
    model = model.cuda()
    criterion = nn.MSELoss(reduction="sum").cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=opt.lr)
    for epoch in range(opt.start_epoch, opt.nEpochs + 1):
        previews = train(loader, optimizer, model, criterion, epoch, opt, net_content)
        torch.save({"epoch": epoch, "model": model.state_dict(), "previews": previews},
                   "checkpoint/model_epoch_{}.pth".format(epoch))
