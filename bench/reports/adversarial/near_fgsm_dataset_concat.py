# Source: https://github.com/owruby/APE-GAN/issues/1
# Report: generating the FGSM adversarial training set for APE-GAN runs out of CUDA memory partway through the loader (2 GB GPU), the OOM surfacing inside fgsm's backward(retain_graph=True)
# Shape: fixed variant: accuracy forwards under torch.no_grad(), per-batch results moved to CPU into lists and concatenated once after the loop
# Expect: near-miss: must be silent
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
    normal_chunks, adv_chunks = [], []
    for x, t in train_loader:
        x, t = Variable(x.cuda()), Variable(t.cuda())
        with torch.no_grad():
            y = model(x)
        train_acc += accuracy(y, t)

        x_adv = fgsm(model, x, t, loss_func, eps)
        with torch.no_grad():
            y_adv = model(x_adv)
        adv_acc += accuracy(y_adv, t)
        train_n += t.size(0)

        normal_chunks.append(x.data.cpu())
        adv_chunks.append(x_adv.data.cpu())
    normal_data = torch.cat(normal_chunks)
    adv_data = torch.cat(adv_chunks)
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
