# Source: https://github.com/layumi/Person_reID_baseline_pytorch/blob/master/test.py
# Report: extract_feature grew the gallery matrix with torch.cat per batch (kept in comments); the current code preallocates len(dataset) rows once
# Shape: features = torch.cat((features, ff.data.cpu()), 0) inside the loader loop: every batch copies the whole matrix so far (quadratic copying, peak twice the matrix); grad is off via the caller's no_grad
# Expect: TML008 line 40
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


def fliplr(img):
    inv_idx = torch.arange(img.size(3) - 1, -1, -1).long()
    return img.index_select(3, inv_idx)


def extract_feature(model, loader, opt, scales=(1,)):
    features = torch.FloatTensor()
    for it, (img, label) in enumerate(loader):
        n, c, h, w = img.size()
        ff = torch.FloatTensor(n, opt.linear_num).zero_().cuda()
        if opt.PCB:
            ff = torch.FloatTensor(n, 2048, 6).zero_().cuda()
        for i in range(2):
            if i == 1:
                img = fliplr(img)
            input_img = Variable(img.cuda())
            for scale in scales:
                if scale != 1:
                    input_img = nn.functional.interpolate(
                        input_img, scale_factor=scale, mode='bicubic', align_corners=False)
                outputs = model(input_img)
                ff += outputs
        if opt.PCB:
            fnorm = torch.norm(ff, p=2, dim=1, keepdim=True) * np.sqrt(6)
            ff = ff.div(fnorm.expand_as(ff))
            ff = ff.view(ff.size(0), -1)
        else:
            fnorm = torch.norm(ff, p=2, dim=1, keepdim=True)
            ff = ff.div(fnorm.expand_as(ff))
        features = torch.cat((features, ff.data.cpu()), 0)  # expect: TML008
    return features


def run_test(model, dataloaders, opt):
    model.classifier.classifier = nn.Sequential()
    model = model.eval().cuda()
    with torch.no_grad():
        gallery_feature = extract_feature(model, dataloaders['gallery'], opt)
        query_feature = extract_feature(model, dataloaders['query'], opt)
    return {'gallery_f': gallery_feature.numpy(), 'query_f': query_feature.numpy()}
