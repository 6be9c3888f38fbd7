# Source: https://github.com/owruby/APE-GAN/issues/1
# Report: generating the FGSM adversarial training set for APE-GAN runs out of CUDA memory partway through the loader (2 GB GPU), the OOM surfacing inside fgsm's backward(retain_graph=True)
# Shape: generation loop grows two GPU accumulators with torch.cat every batch and runs the clean/adversarial accuracy forwards with grad enabled after model.eval()
# Expect: TML008 line 44; TML008 line 45; TML003 line 32; TML003 line 36
import argparse

import torch
import torch.nn as nn
from torch.autograd import Variable

from models import load_cnn
from utils import accuracy, get_loaders


def fgsm(model, x, t, loss_func, eps, min=0, max=1):
    if not isinstance(x, Variable):
        x, t = Variable(x.cuda(), requires_grad=True), Variable(t.cuda())
    x.requires_grad = True
    y = model(x)
    loss = loss_func(y, t)
    model.zero_grad()
    loss.backward(retain_graph=True)
    return Variable(torch.clamp(x.data + eps * torch.sign(x.grad.data), min=min, max=max))


def generate_adversarial_set(model, train_loader, loss_func, eps):
    model.eval()
    train_acc, adv_acc, train_n = 0, 0, 0
    normal_data, adv_data = None, None
    for x, t in train_loader:
        x, t = Variable(x.cuda()), Variable(t.cuda())
        y = model(x)  # expect: TML003
        train_acc += accuracy(y, t)

        x_adv = fgsm(model, x, t, loss_func, eps)
        y_adv = model(x_adv)  # expect: TML003
        adv_acc += accuracy(y_adv, t)
        train_n += t.size(0)

        x, x_adv = x.data, x_adv.data
        if normal_data is None:
            normal_data, adv_data = x, x_adv
        else:
            normal_data = torch.cat((normal_data, x))  # expect: TML008
            adv_data = torch.cat((adv_data, x_adv))  # expect: TML008
    print("Accuracy(normal) {:.4f}, Accuracy(FGSM) {:.4f}".format(
        train_acc / train_n * 100, adv_acc / train_n * 100))
    return normal_data, adv_data


def main(args):
    train_loader, _ = get_loaders(args.data, batch_size=128)
    model = load_cnn(args)().cuda()
    model.load_state_dict(torch.load(args.ckpt, map_location="cuda")["state_dict"])
    loss_func = nn.CrossEntropyLoss().cuda()
    normal, adv = generate_adversarial_set(model, train_loader, loss_func, args.eps)
    torch.save({"normal": normal, "adv": adv}, "data.tar")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=str, default="cifar")
    parser.add_argument("--ckpt", type=str, default="cnn.tar")
    parser.add_argument("--eps", type=float, default=0.15)
    main(parser.parse_args())
