# Source: https://github.com/facebookresearch/kill-the-bits/blob/346ac154ed61d4111efea460700494c7abd2f21b/src/utils/watcher.py
# Report: audited ActivationWatcher (used per layer from src/quantize.py, explained by the maintainer in issue #19): a forward hook stores each layer's input activations while watching, and watch() removes every handle afterwards
# Shape: this rewrite inlines the watcher into quantize.py's per-layer loop and drops the handle.remove(); every layer's hook stays on the student and its closure keeps appending activations to that layer's list during all later finetuning and evaluation passes
# Expect: TML007 line 38
import math
import time
from operator import attrgetter

import torch
import torch.nn as nn

import models
from data import load_data
from optim import CentroidSGD
from quantization import PQ
from utils.training import evaluate, finetune_centroids


def quantize_layers(args):
    student = models.__dict__[args.model](pretrained=True).cuda()
    teacher = models.__dict__[args.model](pretrained=True).cuda()
    student.eval()
    teacher.eval()
    criterion = nn.CrossEntropyLoss().cuda()
    train_loader, test_loader = load_data(data_path=args.data_path, batch_size=args.batch_size,
                                          nb_workers=args.n_workers)
    layers = [k[:k.rfind(".")] for k in student.state_dict() if "bias" not in k][1:]

    for layer in layers:
        t = time.time()
        n_iter_activations = math.ceil(args.n_activations / args.batch_size)
        module = attrgetter(layer)(student)
        activations = []

        def fwd_hook(mod, inputs, output):
            activations.append(inputs[0].data.cpu())

        handle = module.register_forward_hook(fwd_hook)  # expect: TML007
        evaluate(train_loader, student, criterion, n_iter=n_iter_activations)
        in_activations = torch.cat(activations, dim=0)

        M = attrgetter(layer + ".weight.data")(student).detach()
        quantizer = PQ(in_activations, M, n_activations=args.n_activations, n_centroids=args.n_centroids,
                       n_iter=args.n_iter, block_size=args.block_size)
        quantizer.encode()
        attrgetter(layer + ".weight")(student).data = quantizer.decode()

        parameters = [p for (n, p) in student.named_parameters() if layer in n and "bias" not in n]
        optimizer = CentroidSGD([{"params": parameters, "assignments": quantizer.assignments}],
                                lr=args.lr_centroids, momentum=args.momentum_centroids)
        finetune_centroids(train_loader, student, teacher, criterion, optimizer, n_iter=args.finetune_centroids)
        top_1 = evaluate(test_loader, student, criterion)
        print("Layer {}: Top1 {:.2f}, {:.0f}s".format(layer, top_1, time.time() - t))
    return student
