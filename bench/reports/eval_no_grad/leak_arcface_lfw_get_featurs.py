# Source: https://github.com/ronghuaiyang/arcface-pytorch/issues/85
# Report: RuntimeError CUDA out of memory inside get_featurs -> model(data) during the LFW test; train.py runs the same helper after model.eval() at the end of every epoch (source note: get_featurs in https://github.com/ronghuaiyang/arcface-pytorch/blob/04ffdb301ec4691db47679db3178bd63f1899d16/test.py, called from train.py)
# Shape: the feature-extraction helper (no eval-ish name) is called from the epoch loop right after model.eval(); its forward runs with grad enabled
# Expect: TML003 line 37
import os
import time

import numpy as np
import torch
from torch.nn import DataParallel
from torch.optim.lr_scheduler import StepLR

from config import Config
from data import Dataset
from models import resnet18, ArcMarginProduct
from test import get_lfw_list, load_image, get_feature_dict, lfw_test


def save_model(model, save_path, name, iter_cnt):
    save_name = os.path.join(save_path, name + "_" + str(iter_cnt) + ".pth")
    torch.save(model.state_dict(), save_name)
    return save_name


def get_featurs(model, test_list, batch_size=10):
    images = None
    features = None
    for i, img_path in enumerate(test_list):
        image = load_image(img_path)
        if image is None:
            print("read {} error".format(img_path))
            continue
        images = image if images is None else np.concatenate((images, image), axis=0)
        if images.shape[0] % batch_size != 0 and i != len(test_list) - 1:
            continue
        data = torch.from_numpy(images).to(torch.device("cuda"))
        output = model(data)  # expect: TML003
        output = output.data.cpu().numpy()
        feature = np.hstack((output[::2], output[1::2]))
        features = feature if features is None else np.vstack((features, feature))
        images = None
    return features


def main():
    opt = Config()
    device = torch.device("cuda")
    train_dataset = Dataset(opt.train_root, opt.train_list, phase="train", input_shape=opt.input_shape)
    trainloader = torch.utils.data.DataLoader(train_dataset, batch_size=opt.train_batch_size,
                                              shuffle=True, num_workers=opt.num_workers)
    test_list = get_lfw_list(opt.lfw_test_list)
    img_paths = [os.path.join(opt.lfw_root, each) for each in test_list]

    criterion = torch.nn.CrossEntropyLoss()
    model = DataParallel(resnet18().to(device))
    metric_fc = DataParallel(ArcMarginProduct(512, opt.num_classes, s=30, m=0.5).to(device))
    optimizer = torch.optim.SGD([{"params": model.parameters()}, {"params": metric_fc.parameters()}],
                                lr=opt.lr, weight_decay=opt.weight_decay)
    scheduler = StepLR(optimizer, step_size=opt.lr_step, gamma=0.1)

    for i in range(opt.max_epoch):
        model.train()
        for ii, (data_input, label) in enumerate(trainloader):
            data_input = data_input.to(device)
            label = label.to(device).long()
            feature = model(data_input)
            output = metric_fc(feature, label)
            loss = criterion(output, label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if ii % opt.print_freq == 0:
                acc = (output.argmax(1) == label).float().mean().item()
                print("train epoch {} iter {} loss {} acc {}".format(i, ii, loss.item(), acc))
        scheduler.step()
        if i % opt.save_interval == 0:
            save_model(model, opt.checkpoints_path, opt.backbone, i)

        model.eval()
        s = time.time()
        features = get_featurs(model, img_paths, batch_size=32)
        print("total time is", time.time() - s)
        acc, th = lfw_test(get_feature_dict(test_list, features), opt.lfw_test_list)
        print("lfw face verification accuracy: ", acc, "threshold: ", th)


if __name__ == "__main__":
    main()
