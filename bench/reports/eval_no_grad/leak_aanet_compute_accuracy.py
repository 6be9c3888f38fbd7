# Source: https://github.com/yaoyao-liu/class-incremental-learning/blob/a730ce99bba2d02107ff0a2594c2f15b068da266/adaptive-aggregation-networks/utils/incremental/compute_accuracy.py
# Report: removed the `with torch.no_grad():` that wraps the eval loop of compute_accuracy (AANets class-incremental FC / iCaRL / NCM accuracy after each phase)
# Shape: b1_model and tg_feature_model are called on every eval batch after .eval() with grad enabled and no backward, so each batch builds and holds a full activation graph
# Expect: TML003 line 47; TML003 line 59

import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
from scipy.spatial.distance import cdist
from utils.misc import *
from utils.process_fp import process_inputs_fp


def map_labels(order_list, Y_set):
    map_Y = []
    for idx in Y_set:
        map_Y.append(order_list.index(idx))
    return np.array(map_Y)


def _count_nearest_mean(means, feats, targets, metric, device):
    dist = cdist(means, feats, metric)
    score = torch.from_numpy((-dist).T).to(device)
    _, predicted = score.max(1)
    return predicted.eq(targets).sum().item()


def compute_accuracy(the_args, fusion_vars, b1_model, b2_model, tg_feature_model, class_means,
                     evalloader, is_start_iteration=False, scale=None, print_info=True, device=None):
    if device is None:
        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    b1_model.eval()
    tg_feature_model.eval()
    if b2_model is not None:
        b2_model.eval()
    correct = 0
    correct_icarl = 0
    correct_icarl_cosine = 0
    correct_ncm = 0
    total = 0
    for batch_idx, (inputs, targets) in enumerate(evalloader):
        inputs, targets = inputs.to(device), targets.to(device)
        total += targets.size(0)

        if is_start_iteration:
            outputs = b1_model(inputs)  # expect: TML003
        else:
            outputs, outputs_feature = process_inputs_fp(the_args, fusion_vars, b1_model, b2_model, inputs)

        outputs = F.softmax(outputs, dim=1)
        if scale is not None:
            assert scale.shape[0] == 1
            outputs = outputs / scale.repeat(outputs.shape[0], 1).type(torch.FloatTensor).to(device)
        _, predicted = outputs.max(1)
        correct += predicted.eq(targets).sum().item()

        if is_start_iteration:
            outputs_feature = torch.squeeze(tg_feature_model(inputs))  # expect: TML003
        feats = outputs_feature.detach().cpu().numpy()
        correct_icarl += _count_nearest_mean(class_means[:, :, 0].T, feats, targets, 'sqeuclidean', device)
        correct_icarl_cosine += _count_nearest_mean(class_means[:, :, 0].T, feats, targets, 'cosine', device)
        correct_ncm += _count_nearest_mean(class_means[:, :, 1].T, feats, targets, 'sqeuclidean', device)

    if print_info:
        print("  Current accuracy (FC)         :\t\t{:.2f} %".format(100. * correct / total))
        print("  Current accuracy (Proto)      :\t\t{:.2f} %".format(100. * correct_icarl / total))
        print("  Current accuracy (Proto-cos)  :\t\t{:.2f} %".format(100. * correct_icarl_cosine / total))
        print("  Current accuracy (Proto-UB)   :\t\t{:.2f} %".format(100. * correct_ncm / total))
    cnn_acc = 100. * correct / total
    icarl_acc = 100. * correct_icarl / total
    ncm_acc = 100. * correct_ncm / total
    return [cnn_acc, icarl_acc, ncm_acc]
