# Source: https://github.com/zhandand/CNN-MNIST/blob/52d562b381338610ee6b88d775605d03deac03c2/Pseudo-Labelling/attach_label.py
# Report: audited bug: the pseudo-labelling script loads a trained CNN and runs it over the whole unlabeled loader with no torch.no_grad(), keeping only argmax labels (from outputs.data) to write a pseudo-labelled CSV
# Shape: the forward pass of an inference-only helper (model.eval() made explicit here) runs with grad enabled, so every batch saves activations for a backward that never comes; the labels that leave through the helper's return value are detached CPU tensors, so the cost is peak memory, not growth
# Expect: TML003 line 32
import csv

import torch
import torch.nn as nn

from utils.DataMgr import dataset, unsup_loader
from utils.Net import Model


def load_model(path):
    model = Model()
    model.load_state_dict(torch.load(path, map_location='cpu'))
    return model.cuda()


def label_to_file(labels, images, generate_file):
    with open(generate_file, 'w', newline='') as f:
        writer = csv.writer(f)
        for img, label in zip(images, labels):
            writer.writerow([img, label])


def attach_label(model, loader):
    model.eval()
    generate_label = []
    for img, _true_label in loader:
        img = img.cuda()
        outputs = model(img)  # expect: TML003
        pred = torch.max(outputs.data, 1)[1].squeeze().cpu()
        generate_label.extend(pred)
    return [label.item() for label in generate_label]


if __name__ == '__main__':
    model = load_model('utils/model_parameter.pkl')
    labels = attach_label(model, unsup_loader)
    print('generate labels finished')
    label_to_file(labels, dataset.getImg(), generate_file='mnist_generate.csv')
    print('write to file finished')
