# Source: https://github.com/wanggrun/SYSU-30k/issues/6
# Report: testing on the SYSU-30k gallery died in extract_feature at `features = torch.cat((features, ff), 0)` with "not enough memory: you tried to allocate 20756439040 bytes"; the gallery feature matrix is regrown by concatenation once per batch
# Shape: re-ID test script helper; flip-averaged, L2-normalised per-batch features are concatenated onto a running tensor inside the loader loop and the grown tensor is returned
# Expect: TML008 line 31
import torch
from torch.autograd import Variable


def fliplr(img):
    inv_idx = torch.arange(img.size(3) - 1, -1, -1).long()
    return img.index_select(3, inv_idx)


def extract_feature(model, dataloader, feat_dim=2048):
    features = torch.FloatTensor()
    count = 0
    for data in dataloader:
        img, label = data
        n, c, h, w = img.size()
        count += n
        ff = torch.FloatTensor(n, feat_dim).zero_()
        for i in range(2):
            if i == 1:
                img = fliplr(img)
            input_img = Variable(img.cuda())
            with torch.no_grad():
                outputs = model(input_img)
            ff = ff + outputs.data.cpu()
        fnorm = torch.norm(ff, p=2, dim=1, keepdim=True)
        ff = ff.div(fnorm.expand_as(ff))
        features = torch.cat((features, ff), 0)  # expect: TML008
        if count % 10000 < n:
            print("extracted %d images" % count)
    return features


def run_test(model, dataloaders):
    model = model.eval().cuda()
    query_feature = extract_feature(model, dataloaders["query"])
    gallery_feature = extract_feature(model, dataloaders["gallery"])
    return query_feature, gallery_feature
