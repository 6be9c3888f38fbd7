# Source: https://github.com/layumi/Person_reID_baseline_pytorch/blob/master/test.py
# Report: the repository's current extract_feature: the gallery matrix is preallocated once (len(dataset) rows) and filled slice by slice
# Shape: allocated on the first batch, then features[start:end] = ff copies each batch into the CPU buffer; no concat in the loop; grad is off via the caller's no_grad
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


def fliplr(img):
    inv_idx = torch.arange(img.size(3) - 1, -1, -1).long()
    return img.index_select(3, inv_idx)


def extract_feature(model, loader, opt, scales=(1,)):
    features = None
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
        if it == 0:
            features = torch.FloatTensor(len(loader.dataset), ff.shape[1])
        start = it * opt.batchsize
        end = min((it + 1) * opt.batchsize, len(loader.dataset))
        features[start:end, :] = ff
    return features


def run_test(model, dataloaders, opt):
    model.classifier.classifier = nn.Sequential()
    model = model.eval().cuda()
    with torch.no_grad():
        gallery_feature = extract_feature(model, dataloaders['gallery'], opt)
        query_feature = extract_feature(model, dataloaders['query'], opt)
    return {'gallery_f': gallery_feature.numpy(), 'query_f': query_feature.numpy()}
